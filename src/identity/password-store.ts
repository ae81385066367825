// Password hashes live under /internal/passwords/<user> in the key-value storage: no API resource serves /internal/,
// so no read, list or watch reaches them. A record names the user's uid: a user deleted and created again under the
// same name does not inherit the old password.

import {
  DEFAULT_SCRYPT,
  hashPassword,
  type PasswordHash,
  type ScryptParams,
  verifyPassword,
} from "../auth/password-hash.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { StorageError } from "../storage/types.ts";

export const PASSWORDS_PREFIX = "/internal/passwords/";

interface PasswordRecord extends PasswordHash {
  uid: string;
}

export interface UserRef {
  name: string;
  uid: string;
}

export class PasswordStore {
  private readonly storage: KeyValueStore;
  private readonly params: ScryptParams;
  /** Verified against when there is no record, so an unknown user costs the same time as a wrong password. */
  private decoy?: Promise<PasswordHash>;

  constructor(storage: KeyValueStore, params: ScryptParams = DEFAULT_SCRYPT) {
    this.storage = storage;
    this.params = params;
  }

  private async record(name: string): Promise<{ record: PasswordRecord; revision: number } | undefined> {
    const stored = await this.storage.get(PASSWORDS_PREFIX + name);
    return stored && { record: JSON.parse(stored.value) as PasswordRecord, revision: stored.revision };
  }

  async has(user: UserRef): Promise<boolean> {
    return (await this.record(user.name))?.record.uid === user.uid;
  }

  async set(user: UserRef, password: string): Promise<void> {
    const value = JSON.stringify({ ...(await hashPassword(password, this.params)), uid: user.uid });
    const key = PASSWORDS_PREFIX + user.name;
    for (;;) {
      const current = await this.record(user.name);
      try {
        if (current) await this.storage.update(key, value, current.revision);
        else await this.storage.create(key, value);
        return;
      } catch (error) {
        const raced =
          error instanceof StorageError && ["Conflict", "KeyExists", "NotFound"].includes(error.storageCode);
        if (!raced) throw error;
      }
    }
  }

  /** True only for the user's current password. Always runs one hash (no timing difference for unknown users). */
  async verify(user: UserRef | undefined, password: string): Promise<boolean> {
    const current = user ? await this.record(user.name) : undefined;
    if (current && current.record.uid === user?.uid) return verifyPassword(password, current.record);
    this.decoy ??= hashPassword("decoy password", this.params);
    await verifyPassword(password, await this.decoy);
    return false;
  }

  /** Drops the record of a deleted user (only if it is still that user's). */
  async remove(user: UserRef): Promise<void> {
    const current = await this.record(user.name);
    if (!current || current.record.uid !== user.uid) return;
    try {
      await this.storage.delete(PASSWORDS_PREFIX + user.name, current.revision);
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
    }
  }
}
