// One start-up step for stores written before session generations existed. Until then a password change raised
// the user's spec.tokenGeneration, which only Login keys were checked against; now raising tokenGeneration ends
// every key of the user, and a password change raises the session generation instead. So an API key a user held
// across an earlier password change would stop working at the upgrade. This step gives every key that predates the
// change (it has no session-generation annotation: every key made since has one) what its stamps would say had the
// change always been there: a key that is no session and still worked gets its user's current tokenGeneration, and
// every such key gets session generation 0. Login keys and refresh tokens revoked before stay revoked. Writes go
// straight to the store by compare-and-swap (the strategy keeps server annotations from changing through the API);
// several replicas starting together do the same work once between them; later starts find nothing to do.

import type { Logger } from "pino";
import { GROUP } from "../apis/management/v1/common.ts";
import type { OwnedAccessKey } from "../apis/management/v1/ownedaccesskey-schema.ts";
import {
  SESSION_GENERATION_ANNOTATION,
  TOKEN_GENERATION_ANNOTATION,
  USER_UID_ANNOTATION,
} from "../apis/management/v1/ownedaccesskey-secrets.ts";
import type { User } from "../apis/management/v1/user.ts";
import { REFRESH_TOKEN_KEY_TYPE } from "../identity/key-validity.ts";
import { type KeyValueStore, StorageError, type StoredRecord } from "../storage/types.ts";

const KEYS = `/${GROUP}/ownedaccesskeys/`;
const USERS = `/${GROUP}/users/`;
const SESSION_TYPES = new Set(["Login", REFRESH_TOKEN_KEY_TYPE]);

/** The stamps a key made before session generations would carry now; undefined when it needs none. */
export function restamped(key: OwnedAccessKey, users: ReadonlyMap<string, User>): OwnedAccessKey | undefined {
  const annotations = key.metadata.annotations ?? {};
  if (annotations[SESSION_GENERATION_ANNOTATION] !== undefined || !key.spec?.user) return undefined;
  const next: Record<string, string> = { ...annotations, [SESSION_GENERATION_ANNOTATION]: "0" };
  const user = users.get(key.spec.user);
  const current = user?.spec?.tokenGeneration ?? 0;
  const stamped = Number(annotations[TOKEN_GENERATION_ANNOTATION] ?? 0);
  const sameUser = user !== undefined && annotations[USER_UID_ANNOTATION] === user.metadata.uid;
  if (sameUser && !SESSION_TYPES.has(key.spec.type ?? "") && stamped < current) {
    next[TOKEN_GENERATION_ANNOTATION] = String(current);
  }
  return { ...key, metadata: { ...key.metadata, annotations: next } };
}

/** Restamps every key that predates session generations; resolves to how many keys changed. */
export async function restampKeyGenerations(storage: KeyValueStore, logger?: Logger): Promise<number> {
  const users = new Map<string, User>();
  for (const record of (await storage.list({ prefix: USERS })).records) {
    const user = JSON.parse(record.value) as User;
    users.set(user.metadata.name ?? "", user);
  }
  let changed = 0;
  for (const record of (await storage.list({ prefix: KEYS })).records) {
    if (await restampOne(storage, record, users)) changed++;
  }
  if (changed > 0) {
    logger?.info({ keys: changed }, "stamped the session generation on access keys made before it existed");
  }
  return changed;
}

async function restampOne(storage: KeyValueStore, first: StoredRecord, users: ReadonlyMap<string, User>) {
  let record: StoredRecord | undefined = first;
  for (let attempt = 0; record && attempt < 5; attempt++) {
    const next = restamped(JSON.parse(record.value) as OwnedAccessKey, users);
    if (!next) return false;
    try {
      await storage.update(record.key, JSON.stringify(next), record.revision);
      return true;
    } catch (error) {
      if (!(error instanceof StorageError && ["Conflict", "NotFound"].includes(error.storageCode))) throw error;
      record = await storage.get(record.key);
    }
  }
  return false;
}
