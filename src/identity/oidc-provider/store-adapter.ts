// Persistence of the OpenID provider's artifacts (sessions, interactions, grants, codes, access and refresh tokens)
// in the platform's KeyValueStore, as oidc-provider's adapter contract asks (upsert, find, findByUid,
// findByUserCode, consume, destroy, revokeByGrantId). Keys never hold a token: an artifact lives under
//   /internal/oidc/records/<Model>/<sha256 of its id>            {payload, expiresAt, stamp}
// (an opaque token's id is the token itself), with two kinds of pointers beside it:
//   /internal/oidc/index/<uid|userCode>/<sha256 of the value>    {key, expiresAt}   findByUid, findByUserCode
//   /internal/oidc/grants/<sha256 of grantId>/<Model>.<digest>   {key, expiresAt}   revokeByGrantId
// Values are encrypted at rest (the prefix is one of the platform's secret prefixes). An expired artifact reads as
// absent at once and is deleted by sweep(). `stamp` records something about the world when an artifact is written
// (the user's tokenGeneration for a grant); `valid` decides on every read whether it still counts.

import { createHash } from "node:crypto";
import type { Adapter, AdapterPayload } from "oidc-provider";
import { type KeyValueStore, StorageError, type StoredRecord } from "../../storage/types.ts";

export const OIDC_PREFIX = "/internal/oidc/";
const RECORDS = `${OIDC_PREFIX}records/`;
const INDEX = `${OIDC_PREFIX}index/`;
const GRANTS = `${OIDC_PREFIX}grants/`;
const SWEEP_PAGE = 500;
const MAX_ATTEMPTS = 5;

/** The artifacts that belong to a grant (revoked with it). */
const GRANTABLE = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "PreAuthorizedCode",
]);

export interface OidcStoreOptions {
  storage: KeyValueStore;
  now?: () => number;
  /** What to record with an artifact when it is written (kept beside the payload, never given to the provider). */
  stamp?(model: string, payload: AdapterPayload): unknown;
  /** Whether a stored artifact still counts; false reads as absent. */
  valid?(model: string, payload: AdapterPayload, stamp: unknown): boolean | Promise<boolean>;
}

interface StoredArtifact {
  payload: AdapterPayload;
  /** Epoch milliseconds; null: no expiry. */
  expiresAt: number | null;
  stamp?: unknown;
}

interface Pointer {
  key: string;
  expiresAt: number | null;
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");
const isStorage = (error: unknown, ...codes: string[]) =>
  error instanceof StorageError && codes.includes(error.storageCode);

export class OidcStore {
  readonly #storage: KeyValueStore;
  readonly #options: OidcStoreOptions;
  readonly #now: () => number;

  constructor(options: OidcStoreOptions) {
    this.#storage = options.storage;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** oidc-provider's `adapter` option: one adapter per model name. */
  adapterFor(model: string): Adapter {
    const recordKey = (id: string) => `${RECORDS}${model}/${digest(id)}`;
    const memberKey = (grantId: string, key: string) =>
      `${GRANTS}${digest(grantId)}/${model}.${key.slice(key.lastIndexOf("/") + 1)}`;
    return {
      upsert: async (id, payload, expiresIn) => {
        const key = recordKey(id);
        const expiresAt = typeof expiresIn === "number" ? this.#now() + expiresIn * 1000 : null;
        const artifact: StoredArtifact = { payload, expiresAt };
        const stamp = this.#options.stamp?.(model, payload);
        if (stamp !== undefined) artifact.stamp = stamp;
        const pointer = JSON.stringify({ key, expiresAt } satisfies Pointer);
        // Codes and tokens are written once under a new random id: try the create first.
        const once = GRANTABLE.has(model);
        const writes = [this.#put(key, JSON.stringify(artifact), once)];
        if (model === "Session" && typeof payload.uid === "string") {
          writes.push(this.#put(`${INDEX}uid/${digest(payload.uid)}`, pointer, false));
        }
        if (typeof payload.userCode === "string") {
          writes.push(this.#put(`${INDEX}userCode/${digest(payload.userCode)}`, pointer, once));
        }
        if (once && typeof payload.grantId === "string") {
          writes.push(this.#put(memberKey(payload.grantId, key), pointer, true));
        }
        await Promise.all(writes);
      },
      find: (id) => this.#read(model, recordKey(id)),
      findByUid: (uid) => this.#readIndexed(model, `${INDEX}uid/${digest(uid)}`),
      findByUserCode: (userCode) => this.#readIndexed(model, `${INDEX}userCode/${digest(userCode)}`),
      consume: async (id) => {
        await this.#change(recordKey(id), (artifact) => {
          artifact.payload.consumed = Math.floor(this.#now() / 1000);
        });
      },
      destroy: async (id) => {
        const key = recordKey(id);
        const record = await this.#storage.get(key);
        if (!record) return;
        await this.#delete(key, record.revision);
        const { payload } = JSON.parse(record.value) as StoredArtifact;
        if (typeof payload.grantId === "string") await this.#delete(memberKey(payload.grantId, key));
      },
      revokeByGrantId: (grantId) => this.#revokeGrant(grantId),
    };
  }

  /** Deletes every expired artifact and pointer; resolves to how many keys were deleted. */
  async sweep(): Promise<number> {
    const now = this.#now();
    let deleted = 0;
    let startAfter: string | undefined;
    for (;;) {
      const { records } = await this.#storage.list({ prefix: OIDC_PREFIX, limit: SWEEP_PAGE, startAfter });
      for (const record of records) {
        const { expiresAt } = JSON.parse(record.value) as { expiresAt: number | null };
        if (typeof expiresAt === "number" && expiresAt <= now && (await this.#delete(record.key, record.revision))) {
          deleted++;
        }
      }
      if (records.length < SWEEP_PAGE) return deleted;
      startAfter = records[records.length - 1].key;
    }
  }

  async #read(model: string, key: string): Promise<AdapterPayload | undefined> {
    const record = await this.#storage.get(key);
    if (!record) return undefined;
    const artifact = JSON.parse(record.value) as StoredArtifact;
    if (artifact.expiresAt !== null && artifact.expiresAt <= this.#now()) return undefined;
    const valid = this.#options.valid ? await this.#options.valid(model, artifact.payload, artifact.stamp) : true;
    return valid ? artifact.payload : undefined;
  }

  async #readIndexed(model: string, indexKey: string): Promise<AdapterPayload | undefined> {
    const record = await this.#storage.get(indexKey);
    if (!record) return undefined;
    return this.#read(model, (JSON.parse(record.value) as Pointer).key);
  }

  async #revokeGrant(grantId: string): Promise<void> {
    const { records } = await this.#storage.list({ prefix: `${GRANTS}${digest(grantId)}/` });
    await Promise.all(
      records.map(async (member) => {
        await this.#delete((JSON.parse(member.value) as Pointer).key);
        await this.#delete(member.key, member.revision);
      }),
    );
  }

  /** Create or replace (compare-and-swap, retried when another writer came first); `createFirst` skips a read. */
  async #put(key: string, value: string, createFirst: boolean): Promise<StoredRecord> {
    if (createFirst) {
      try {
        return await this.#storage.create(key, value);
      } catch (error) {
        if (!isStorage(error, "KeyExists")) throw error;
      }
    }
    for (let attempt = 1; ; attempt++) {
      const current = await this.#storage.get(key);
      try {
        if (!current) return await this.#storage.create(key, value);
        if (current.value === value) return current;
        return await this.#storage.update(key, value, current.revision);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isStorage(error, "KeyExists", "Conflict", "NotFound")) throw error;
      }
    }
  }

  async #change(key: string, edit: (artifact: StoredArtifact) => void): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.#storage.get(key);
      if (!current) return;
      const artifact = JSON.parse(current.value) as StoredArtifact;
      edit(artifact);
      try {
        await this.#storage.update(key, JSON.stringify(artifact), current.revision);
        return;
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isStorage(error, "Conflict", "NotFound")) throw error;
      }
    }
  }

  /** True when this call deleted the key; gone already (or changed, with a revision) is not an error. */
  async #delete(key: string, revision?: number): Promise<boolean> {
    try {
      await this.#storage.delete(key, revision);
      return true;
    } catch (error) {
      if (isStorage(error, "NotFound", "Conflict")) return false;
      throw error;
    }
  }
}
