// The cluster API server's admin bearer token: random, kept in <data-dir>/admin-token (0600) so kubeconfigs keep
// working across restarts, and recognized by comparing SHA-256 digests in constant time (the token itself is
// never compared byte by byte, logged or kept beyond its digest).

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AuthenticationRequest, Authenticator } from "../../auth/types.ts";
import type { UserInfo } from "../../registry/types.ts";

export const ADMIN_TOKEN_FILE = "admin-token";
export const ADMIN_USER: UserInfo = { name: "admin", groups: ["system:masters", "system:authenticated"] };

/** Reads the token, creating it on the first start. */
export async function ensureAdminToken(dataDir: string): Promise<string> {
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  try {
    const token = (await readFile(file, "utf8")).trim();
    if (token) {
      await chmod(file, 0o600);
      return token;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const token = randomBytes(32).toString("base64url");
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return token;
}

const digest = (value: string) => createHash("sha256").update(value).digest();

export function bearerToken(request: AuthenticationRequest): string | undefined {
  const header = request.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  return value?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}

/** Recognizes exactly the admin token; any other request is left to the next authenticator. */
export class AdminTokenAuthenticator implements Authenticator {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  async authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined> {
    const token = bearerToken(request);
    if (!token) return undefined;
    return timingSafeEqual(digest(token), this.#digest) ? ADMIN_USER : undefined;
  }
}
