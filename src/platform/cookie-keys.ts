// The platform's cookie secrets: made once (32 random bytes), kept encrypted in the store (under the OpenID
// provider's prefix, where the first version put them), and so the same on every replica. They sign the OpenID
// provider's cookies and seal the state browsers carry before anyone authenticated (SSO logins in progress, the
// provider's interactions): a cookie made by one replica is read by any other.

import { randomBytes } from "node:crypto";
import { OIDC_PREFIX } from "../identity/oidc-provider/store-adapter.ts";
import { type KeyValueStore, StorageError } from "../storage/types.ts";

const COOKIE_KEYS = `${OIDC_PREFIX}cookie-keys`;

/** The secrets, the first one current; made and stored on the first call of the first process. */
export async function loadCookieKeys(storage: KeyValueStore): Promise<string[]> {
  const stored = await storage.get(COOKIE_KEYS);
  if (stored) return (JSON.parse(stored.value) as { keys: string[] }).keys;
  const keys = [randomBytes(32).toString("base64url")];
  try {
    await storage.create(COOKIE_KEYS, JSON.stringify({ keys }));
    return keys;
  } catch (error) {
    if (!(error instanceof StorageError && error.storageCode === "KeyExists")) throw error;
    return loadCookieKeys(storage);
  }
}
