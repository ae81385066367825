// Persistence of the OpenID provider's artifacts (sessions, interactions, grants, codes, access and refresh tokens)
// in the platform's KeyValueStore, as oidc-provider's adapter contract asks (upsert, find, findByUid,
// findByUserCode, consume, destroy, revokeByGrantId). Every replica on the store sees every artifact, so a sign-in
// started on one finishes on another. Keys never hold a token: an artifact lives under
//   /internal/oidc/records/<Model>/<sha256 of its id>            {payload, expiresAt, stamp}
// (an opaque token's id is the token itself), with two kinds of pointers beside it:
//   /internal/oidc/index/<uid|userCode>/<sha256 of the value>    {key, expiresAt}   findByUid, findByUserCode
//   /internal/oidc/grants/<sha256 of grantId>/<Model>.<digest>   {key, expiresAt}   revokeByGrantId
// Values are encrypted at rest (the prefix is one of the platform's secret prefixes). An expired artifact reads as
// absent at once and is deleted by sweep() (run by the leader). `stamp` records something about the world when an
// artifact is first written (the user's tokenGeneration for a grant, the access key of a refresh token); `valid`
// decides on every read whether it still counts; `released` hears of every artifact that was consumed or removed.
// consume() is a compare-and-swap: a code or rotated refresh token is consumed once across every replica, and a
// second consume (two redemptions racing) is refused as invalid_grant and revokes the grant, as reuse is.

import { createHash } from "node:crypto";
import type { Adapter, AdapterPayload } from "oidc-provider";
import { deleteIfPresent } from "../../storage/delete-if-present.ts";
import { sweepExpired } from "../../storage/expiring-records.ts";
import { type KeyValueStore, StorageError, type StoredRecord } from "../../storage/types.ts";
import { errors } from "./oidc-provider-module.ts";

export const OIDC_PREFIX = "/internal/oidc/";
const RECORDS = `${OIDC_PREFIX}records/`;
const INDEX = `${OIDC_PREFIX}index/`;
const GRANTS = `${OIDC_PREFIX}grants/`;
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
  /**
   * What to record with an artifact when it is written (kept beside the payload, never given to the provider).
   * `expiresIn`: the artifact's lifetime in seconds, when it has one.
   */
  stamp?(model: string, payload: AdapterPayload, expiresIn: number | undefined): unknown;
  /** Whether a stored artifact still counts; false reads as absent. */
  valid?(model: string, payload: AdapterPayload, stamp: unknown): boolean | Promise<boolean>;
  /** An artifact was consumed, destroyed, revoked with its grant or swept: what belongs to it elsewhere may go. */
  released?(model: string, payload: AdapterPayload, stamp: unknown): Promise<void>;
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
        const stamp = await this.#options.stamp?.(
          model,
          payload,
          typeof expiresIn === "number" ? expiresIn : undefined,
        );
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
        const artifact = await this.#change(recordKey(id), (current) => {
          if (current.payload.consumed) return false;
          current.payload.consumed = Math.floor(this.#now() / 1000);
          return true;
        });
        if (!artifact) return;
        if (artifact.changed) {
          await this.#options.released?.(model, artifact.payload, artifact.stamp);
          return;
        }
        // Consumed meanwhile by another request (on any replica): both were one redemption too many.
        if (typeof artifact.payload.grantId === "string") await this.#revokeGrant(artifact.payload.grantId);
        throw new errors.InvalidGrant(`${model === "RefreshToken" ? "refresh token" : "grant source"} already used`);
      },
      destroy: async (id) => {
        const key = recordKey(id);
        const removed = await this.#remove(key);
        if (!removed) return;
        const { payload } = JSON.parse(removed.value) as StoredArtifact;
        if (typeof payload.grantId === "string") await this.#delete(memberKey(payload.grantId, key));
        await this.#released(removed);
      },
      revokeByGrantId: (grantId) => this.#revokeGrant(grantId),
    };
  }

  /** Deletes every expired artifact and pointer; resolves to how many keys were deleted. */
  sweep(): Promise<number> {
    return sweepExpired({
      storage: this.#storage,
      prefix: OIDC_PREFIX,
      now: this.#now,
      deleted: (record) => this.#released(record),
    });
  }

  /** What was stamped on an artifact when it was written (consumed or not), if it is still stored. */
  async stampOf(model: string, id: string): Promise<unknown> {
    const record = await this.#storage.get(`${RECORDS}${model}/${digest(id)}`);
    return record ? (JSON.parse(record.value) as StoredArtifact).stamp : undefined;
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
        const removed = await this.#remove((JSON.parse(member.value) as Pointer).key);
        if (removed) await this.#released(removed);
        await this.#delete(member.key, member.revision);
      }),
    );
  }

  /** Tells `released` of a deleted artifact record (pointers are no artifacts). */
  async #released(record: StoredRecord): Promise<void> {
    if (!record.key.startsWith(RECORDS) || !this.#options.released) return;
    const model = record.key.slice(RECORDS.length, record.key.lastIndexOf("/"));
    const { payload, stamp } = JSON.parse(record.value) as StoredArtifact;
    await this.#options.released(model, payload, stamp);
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

  /**
   * Edits a stored artifact by compare-and-swap (re-read and re-edited when another writer came first); `edit`
   * answers false to leave it as it is. Resolves to the artifact as it now stands, or undefined when it is gone.
   */
  async #change(
    key: string,
    edit: (artifact: StoredArtifact) => boolean,
  ): Promise<(StoredArtifact & { changed: boolean }) | undefined> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.#storage.get(key);
      if (!current) return undefined;
      const artifact = JSON.parse(current.value) as StoredArtifact;
      if (!edit(artifact)) return { ...artifact, changed: false };
      try {
        await this.#storage.update(key, JSON.stringify(artifact), current.revision);
        return { ...artifact, changed: true };
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isStorage(error, "Conflict", "NotFound")) throw error;
      }
    }
  }

  /** The last version of the key this call deleted; undefined when it was gone already. */
  async #remove(key: string): Promise<StoredRecord | undefined> {
    try {
      return await this.#storage.delete(key);
    } catch (error) {
      if (isStorage(error, "NotFound")) return undefined;
      throw error;
    }
  }

  #delete(key: string, revision?: number): Promise<boolean> {
    return deleteIfPresent(this.#storage, key, revision);
  }
}
