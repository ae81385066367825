// Authenticates the bootstrap admin access key created on first start. Its digest lives in the store under
// /internal/ (no API resource serves that prefix). The OwnedAccessKey authenticator replaces this one.

import { errors } from "../apimachinery/errors.ts";
import type { UserInfo } from "../registry/types.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { bearerToken, digestAccessKey, digestsEqual } from "./access-key-material.ts";
import type { AuthenticationRequest, Authenticator } from "./types.ts";

export const BOOTSTRAP_KEY = "/internal/bootstrap/admin-access-key";
/** Group of callers with the built-in `admin` cluster role. */
export const ADMINS_GROUP = "platform:admins";

interface BootstrapRecord {
  digest: string;
  user: string;
}

export class BootstrapAuthenticator implements Authenticator {
  private readonly record: BootstrapRecord;

  private constructor(record: BootstrapRecord) {
    this.record = record;
  }

  static async load(storage: KeyValueStore): Promise<BootstrapAuthenticator | undefined> {
    const stored = await storage.get(BOOTSTRAP_KEY);
    return stored ? new BootstrapAuthenticator(JSON.parse(stored.value) as BootstrapRecord) : undefined;
  }

  static async create(storage: KeyValueStore, user: string, key: string): Promise<BootstrapAuthenticator> {
    const record: BootstrapRecord = { digest: digestAccessKey(key), user };
    await storage.create(BOOTSTRAP_KEY, JSON.stringify(record));
    return new BootstrapAuthenticator(record);
  }

  async authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined> {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) return undefined;
    if (token === "") throw errors.unauthorized("invalid bearer token");
    if (!digestsEqual(digestAccessKey(token), this.record.digest)) {
      throw errors.unauthorized("Access key not found. Please login again");
    }
    return { name: this.record.user, groups: [ADMINS_GROUP, "system:authenticated"] };
  }
}
