// The cluster API server's admin bearer token: random, kept in <data-dir>/admin-token (0600) so kubeconfigs keep
// working across restarts, and recognized by comparing SHA-256 digests in constant time (the token itself is
// never compared byte by byte, logged or kept beyond its digest). The names of the admin's files live here, not in
// cluster-api-server.ts, so what reads them (the cluster agent) does not load the whole server.

import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { requestBearerToken } from "../auth/access-key-material.ts";
import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { UserInfo } from "../registry/types.ts";

export const ADMIN_TOKEN_FILE = "admin-token";
/** The admin kubeconfig the server writes into its data directory. */
export const CLUSTER_ADMIN_KUBECONFIG = "admin.kubeconfig";
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

const digest = (value: string) => hash("sha256", value, "buffer");

/** Recognizes exactly the admin token; any other request is left to the next authenticator. */
export class AdminTokenAuthenticator implements Authenticator {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  authenticate(request: AuthenticationRequest): UserInfo | undefined {
    const token = requestBearerToken(request);
    if (!token) return undefined;
    return timingSafeEqual(digest(token), this.#digest) ? ADMIN_USER : undefined;
  }
}
