// The generic resource store: every shared rule of the API (names, optimistic concurrency, generation, finalizers,
// graceful deletion, owner references, managedFields, dry-run) over the revisioned key-value storage.
// A resource adds only its strategy (see types.ts for the order hooks run in).

import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { updateManagedFields } from "../apimachinery/apply/managed-fields.ts";
import { serverSideApply } from "../apimachinery/apply/server-side-apply.ts";
import { errors, isStatusError, StatusError } from "../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../apimachinery/field-errors.ts";
import { applyJsonPatch } from "../apimachinery/json-patch.ts";
import { applyMergePatch } from "../apimachinery/merge-patch.ts";
import { generateName } from "../apimachinery/names.ts";
import { type CompiledSchema, compileObjectSchema, objectSchemaOf } from "../apimachinery/schema.ts";
import { storageStatus } from "../apimachinery/storage-status.ts";
import { applyStrategicMergePatch } from "../apimachinery/strategic-merge-patch.ts";
import type { GroupKind, GroupResource, JsonMap, KubeList, KubeObject, OwnerReference } from "../apimachinery/types.ts";
import { isPlainObject } from "../apimachinery/types.ts";
import { type KeyValueStore, StorageError, type StoredRecord } from "../storage/types.ts";
import { compileSelector } from "./compile-selector.ts";
import { decodeObject } from "./decode.ts";
import { EncodedJson } from "./encoded-json.ts";
import { KeyedQueue } from "./keyed-queue.ts";
import { objectKey, parseKey } from "./keys.ts";
import {
  FOREGROUND_FINALIZER,
  ORPHAN_FINALIZER,
  specChanged,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
} from "./object-meta.ts";
import { canonicalOrder, ReadEncoder } from "./store-encoded.ts";
import { listEncoded, listObjects } from "./store-list.ts";
import { CreateManagedFieldsMemo } from "./store-managed-fields.ts";
import { type ChainHost, PatchChains } from "./store-patch-chain.ts";
import { watchObjects } from "./store-watch.ts";
import { formatTimestamp } from "./time.ts";
import type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ObjectRef,
  PatchOptions,
  PatchType,
  RequestContext,
  ResourceDefinition,
  ResourceStore,
  WatchHandle,
  WatchOptions,
  WatchSink,
  WriteGate,
  WriteOptions,
} from "./types.ts";

/**
 * How many times a read-modify-write re-reads and retries after losing a compare-and-swap. Writers in this
 * process are queued per key (KeyedQueue), so this only matters for writers elsewhere on a shared backend.
 */
const PATCH_RETRIES = 32;
/** generateName attempts before giving up with 409. */
const GENERATE_NAME_ATTEMPTS = 8;

export interface GenericStoreOptions {
  definition: ResourceDefinition;
  storage: KeyValueStore;
  /** Finds the resource of an owner reference, to check blockOwnerDeletion permission. */
  resolveKind?: (apiVersion: string, kind: string) => ResourceDefinition | undefined;
  /** Byte budget of the encoded-read cache (used only when presentForRead is declared caller-independent). */
  encodedCacheBytes?: number;
  /** Refuses writes that add data (see WriteGate); none: every write may go ahead. */
  writeGate?: WriteGate;
}

/** What an internal write needs beyond the object itself. */
interface WriteIntent {
  manager: string;
  dryRun: boolean;
  subresource?: string;
  /** Set when server-side apply already computed managedFields. */
  managedFieldsDone?: boolean;
}

export class GenericStore implements ResourceStore {
  readonly definition: ResourceDefinition;
  readonly groupResource: GroupResource;
  readonly groupKind: GroupKind;
  readonly apiVersion: string;
  readonly storage: KeyValueStore;
  readonly schema: CompiledSchema;
  /** The whole-object schema (for managedFields list semantics). */
  readonly fullSchema: JsonMap;
  /** Encodes stored versions for JSON reads (see store-encoded.ts). */
  readonly encoder: ReadEncoder;
  private readonly resolveKind: GenericStoreOptions["resolveKind"];
  private readonly writeGate?: WriteGate;
  private readonly sharedDecodes = new WeakMap<StoredRecord, KubeObject>();
  private readonly sharedPresented = new WeakMap<StoredRecord, KubeObject>();
  private readonly writes = new KeyedQueue();
  private readonly createManagedFields = new CreateManagedFieldsMemo();
  private readonly chains: PatchChains;

  constructor(options: GenericStoreOptions) {
    const d = options.definition;
    this.definition = d;
    this.storage = options.storage;
    this.groupResource = { group: d.group, resource: d.plural };
    this.groupKind = { group: d.group, kind: d.kind };
    this.apiVersion = d.group ? `${d.group}/${d.version}` : d.version;
    this.schema = compileObjectSchema(d.schema);
    this.fullSchema = objectSchemaOf(d.schema);
    this.resolveKind = options.resolveKind;
    this.writeGate = options.writeGate;
    this.chains = new PatchChains(this.chainHost(), this.writes);
    this.encoder = new ReadEncoder(
      { apiVersion: this.apiVersion, kind: d.kind, strategy: d.strategy, decode: (record) => this.decode(record) },
      options.encodedCacheBytes,
    );
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  async get(context: RequestContext, ref: ObjectRef): Promise<KubeObject> {
    const record = await this.storage.get(this.key(ref));
    if (!record) throw errors.notFound(this.groupResource, ref.name);
    return this.present(this.decode(record), context);
  }

  async getEncoded(context: RequestContext, ref: ObjectRef): Promise<EncodedJson> {
    const record = await this.storage.get(this.key(ref));
    if (!record) throw errors.notFound(this.groupResource, ref.name);
    return new EncodedJson(this.encoder.encode(record, context));
  }

  list(context: RequestContext, options: ListOptions): Promise<KubeList> {
    return listObjects(this, context, options);
  }

  listEncoded(context: RequestContext, options: ListOptions): Promise<EncodedJson> {
    return listEncoded(this, context, options);
  }

  watch(context: RequestContext, options: WatchOptions, sink: WatchSink): Promise<WatchHandle> {
    return watchObjects(this, context, options, sink);
  }

  // ---- create ------------------------------------------------------------------------------------------------

  async create(
    context: RequestContext,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<KubeObject> {
    const { object } = await this.createFromBody(context, namespace, body, options);
    return this.present(object, context);
  }

  /** create() answered with the stored text itself (no decode or re-encode of what was just written). */
  async createEncoded(
    context: RequestContext,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<EncodedJson> {
    const { object, record } = await this.createFromBody(context, namespace, body, options);
    if (!record) return new EncodedJson(JSON.stringify(this.present(object, context)));
    if (!this.definition.strategy.presentForRead) {
      // Nobody else holds the object: it can be the shared decode the watchers (the garbage collector at least)
      // read this record as, instead of each parsing it again. They run in a later macrotask, after this.
      this.sharedDecodes.set(record, object);
      return new EncodedJson(this.encoder.encode(record, context));
    }
    return new EncodedJson(this.encoder.encode(record, context, object));
  }

  private createFromBody(
    context: RequestContext,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<Created> {
    const object = decodeObject(this.definition, this.schema, body, options.fieldValidation, context);
    this.adoptNamespace(object, namespace);
    if (object.metadata.resourceVersion) {
      throw errors.badRequest("resourceVersion should not be set on objects to be created");
    }
    return this.createStored(context, object, {
      manager: managerName(options.fieldManager, context),
      dryRun: options.dryRun === true,
    });
  }

  private async createDecoded(context: RequestContext, object: KubeObject, intent: WriteIntent): Promise<KubeObject> {
    return this.present((await this.createStored(context, object, intent)).object, context);
  }

  /** The create path: returns the stored object (with its resourceVersion) and record; no record on dry run. */
  private async createStored(context: RequestContext, object: KubeObject, intent: WriteIntent): Promise<Created> {
    const d = this.definition;
    const meta = object.metadata;
    // Server-owned metadata: whatever the client sent is replaced.
    meta.uid = randomUUID();
    meta.creationTimestamp = formatTimestamp(context.now);
    meta.generation = 1;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    delete meta.resourceVersion;
    if (d.statusSubresource && !intent.managedFieldsDone) delete object.status;
    const name = meta.name || meta.generateName || "";
    // Strategy hooks may rely on the schema's types (as Kubernetes' typed decoding guarantees).
    this.validateOrThrow(name, this.schema.validate(object));
    d.strategy.canonicalize?.(object);
    await d.strategy.prepareForCreate?.(object, context);

    this.validateOrThrow(name, [
      ...validateObjectMetaCreate(d, meta),
      ...this.schema.validate(object),
      ...((await d.strategy.validate?.(object, context)) ?? []),
      ...(await this.checkBlockOwnerDeletion(context, meta.ownerReferences, [])),
    ]);

    if (!intent.managedFieldsDone) {
      meta.managedFields = this.managedFieldsAfterWrite(undefined, object, intent, context);
    }
    if (intent.dryRun) {
      if (!meta.name) meta.name = generateName(meta.generateName ?? "");
      // As a real create would: a name already taken is a 409 (the check stores nothing).
      else if (await this.storage.get(this.key({ namespace: meta.namespace, name: meta.name }))) {
        throw errors.alreadyExists(this.groupResource, meta.name);
      }
      return { object };
    }
    this.writeGate?.();
    if (meta.name) return this.insert(object, meta.name);

    // generateName: try a few random suffixes; a collision every time means the prefix space is crowded.
    let candidate = "";
    for (let attempt = 0; attempt < GENERATE_NAME_ATTEMPTS; attempt++) {
      candidate = generateName(meta.generateName ?? "");
      meta.name = candidate;
      try {
        return await this.insert(object, candidate);
      } catch (error) {
        if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
      }
    }
    throw errors.generateNameExhausted(this.groupResource, candidate);
  }

  /** Stores a new object; the object itself becomes the result (serialized once, never parsed back). */
  private async insert(object: KubeObject, name: string): Promise<Created> {
    try {
      const record = await this.storage.create(
        this.key({ namespace: object.metadata.namespace, name }),
        this.encode(object),
      );
      object.metadata.resourceVersion = String(record.revision);
      return { object, record };
    } catch (error) {
      throw this.mapStorageError(error, name);
    }
  }

  // ---- update (PUT) ------------------------------------------------------------------------------------------

  async update(context: RequestContext, ref: ObjectRef, body: unknown, options: WriteOptions): Promise<KubeObject> {
    const object = decodeObject(this.definition, this.schema, body, options.fieldValidation, context);
    this.checkIdentity(object, ref);
    const resourceVersion = object.metadata.resourceVersion;
    if (!resourceVersion && this.definition.allowUnconditionalUpdate)
      return this.updateUnconditionally(context, ref, object, options);
    if (!resourceVersion) {
      throw errors.invalid(this.groupKind, ref.name, [
        {
          type: "FieldValueInvalid",
          field: "metadata.resourceVersion",
          badValueText: "0x0",
          detail: "must be specified for an update",
        },
      ]);
    }
    const current = await this.storage.get(this.key(ref));
    if (!current) throw errors.notFound(this.groupResource, ref.name);
    if (String(current.revision) !== resourceVersion) throw errors.modified(this.groupResource, ref.name);
    const updated = await this.updateDecoded(context, current, object, {
      manager: managerName(options.fieldManager, context),
      dryRun: options.dryRun === true,
      subresource: ref.subresource,
    });
    return this.present(updated, context);
  }

  /** A PUT without resourceVersion of a kind that allows it: over the stored object as it is now, retried on a race. */
  private async updateUnconditionally(
    context: RequestContext,
    ref: ObjectRef,
    object: KubeObject,
    options: WriteOptions,
  ): Promise<KubeObject> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.storage.get(this.key(ref));
      if (!current) throw errors.notFound(this.groupResource, ref.name);
      try {
        const updated = await this.updateDecoded(context, current, structuredClone(object), {
          manager: managerName(options.fieldManager, context),
          dryRun: options.dryRun === true,
          subresource: ref.subresource,
        });
        return this.present(updated, context);
      } catch (error) {
        if (!(isStatusError(error) && error.reason === "Conflict") || attempt >= UNCONDITIONAL_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * The one update path (PUT, patches, apply, finalizer removal by the GC). `next` is the desired object;
   * the stored record `current` is the compare-and-swap base. Returns the stored (or dry-run) result.
   */
  async updateDecoded(
    context: RequestContext,
    current: StoredRecord,
    next: KubeObject,
    intent: WriteIntent,
  ): Promise<KubeObject> {
    return this.finishUpdate(current, await this.prepareUpdate(context, current, next, intent));
  }

  /** The write (or none) of a prepared update over the committed record `current`. */
  private async finishUpdate(current: StoredRecord, prepared: PreparedUpdate): Promise<KubeObject> {
    if (prepared.kind === "unchanged") return this.decode(current);
    const object = prepared.object;
    if (prepared.kind === "dryRun") {
      object.metadata.resourceVersion = String(current.revision);
      return object;
    }
    const key = this.key({ namespace: object.metadata.namespace, name: object.metadata.name ?? "" });
    try {
      if (prepared.kind === "delete") {
        const deleted = await this.storage.delete(key, current.revision);
        return this.decode({ ...deleted, value: this.encode(object) });
      }
      const record = await this.storage.update(key, this.encode(object), current.revision);
      // The written object is the result: serialized once, never parsed back.
      object.metadata.resourceVersion = String(record.revision);
      return object;
    } catch (error) {
      throw this.mapStorageError(error, object.metadata.name ?? "");
    }
  }

  /**
   * Everything of an update except the write: the desired object completed and checked (hooks, schema, metadata
   * rules, managedFields), or that nothing changed. `current` only has to decode to the object being replaced, so
   * it may be a version that is not committed yet (chained patches).
   */
  async prepareUpdate(
    context: RequestContext,
    current: StoredRecord,
    next: KubeObject,
    intent: WriteIntent,
  ): Promise<PreparedUpdate> {
    const d = this.definition;
    const old = this.decode(current);
    const meta = next.metadata;
    const oldMeta = old.metadata;

    // Server-owned metadata comes from the stored object.
    if (!meta.uid) meta.uid = oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    meta.deletionTimestamp = oldMeta.deletionTimestamp;
    meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    meta.generation = oldMeta.generation;
    dropUndefined(meta);
    delete meta.selfLink;

    // Status subresource: the main resource cannot change status, and /status changes nothing but status.
    if (d.statusSubresource) {
      if (intent.subresource === "status") {
        const { status } = next;
        const { resourceVersion, managedFields } = meta;
        for (const key of Object.keys(next)) delete next[key];
        Object.assign(next, structuredClone(old));
        next.metadata.resourceVersion = resourceVersion;
        // Server-side apply computed ownership for this write already; keep it.
        if (intent.managedFieldsDone) next.metadata.managedFields = managedFields;
        if (status === undefined) delete next.status;
        else next.status = status;
      } else if (old.status === undefined) {
        delete next.status;
      } else {
        next.status = old.status;
      }
    }

    this.validateOrThrow(meta.name ?? "", this.schema.validate(next));
    d.strategy.canonicalize?.(next);
    await d.strategy.prepareForUpdate?.(next, old, context);
    if (specChanged(next, old)) next.metadata.generation = (oldMeta.generation ?? 0) + 1;

    this.validateOrThrow(next.metadata.name ?? "", [
      ...validateObjectMetaUpdate(d, next.metadata, oldMeta),
      ...this.schema.validate(next),
      ...((await d.strategy.validate?.(next, context)) ?? []),
      ...((await d.strategy.validateUpdate?.(next, old, context)) ?? []),
      ...(await this.checkBlockOwnerDeletion(context, next.metadata.ownerReferences, oldMeta.ownerReferences ?? [])),
    ]);

    delete next.metadata.resourceVersion;
    delete old.metadata.resourceVersion;
    if (!intent.managedFieldsDone) {
      // Client-sent managedFields are ignored; ownership is recomputed from the change.
      next.metadata.managedFields = old.metadata.managedFields;
      dropUndefined(next.metadata);
      if (isDeepStrictEqual(next, old)) return { kind: "unchanged" };
      next.metadata.managedFields = this.managedFieldsAfterWrite(old, next, intent, context);
    } else if (isDeepStrictEqual(next, old)) {
      // Nothing changed: no write, no event, same resourceVersion (keeps controllers loop-free).
      return { kind: "unchanged" };
    }
    if (intent.dryRun) return { kind: "dryRun", object: next };
    // Emptying the finalizers of an object being deleted completes the deletion.
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length && deletionDue(next, context.now)) {
      return { kind: "delete", object: next };
    }
    // An object being deleted may still change (its finalizers go as controllers finish): that empties the store.
    if (!next.metadata.deletionTimestamp) this.writeGate?.();
    return { kind: "write", object: next };
  }

  // ---- patch -------------------------------------------------------------------------------------------------

  async patch(
    context: RequestContext,
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    const key = this.key(ref);
    if (type === "apply" || !this.storage.updateChain) {
      return this.writes.run(key, () => this.patchNow(context, ref, type, body, options));
    }
    checkNotForced(options);
    // Queued patches of this key share one commit (store-patch-chain.ts).
    const object = await this.chains.submit(key, { context, ref, type, body, options });
    return { object, created: false };
  }

  /** The patched object of a JSON, merge or strategic merge patch (server-side apply has its own path). */
  private applyPatchBody(type: PatchType, live: KubeObject, body: unknown): unknown {
    if (type === "json") return applyJsonPatch(live, body);
    if (type === "strategic") return applyStrategicMergePatch(live, body, this.fullSchema);
    return applyMergePatch(live, body);
  }

  private async patchNow(
    context: RequestContext,
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    const manager = managerName(options.fieldManager, context);
    const dryRun = options.dryRun === true;
    if (type === "apply") return this.apply(context, ref, body, options);
    checkNotForced(options);
    for (let attempt = 0; ; attempt++) {
      const current = await this.storage.get(this.key(ref));
      if (!current) throw errors.notFound(this.groupResource, ref.name);
      const live = this.decode(current);
      const patched = this.applyPatchBody(type, live, body);
      const object = decodeObject(this.definition, this.schema, patched, options.fieldValidation, context);
      this.checkIdentity(object, ref);
      // A resourceVersion in the patch is a precondition; without one the patch applies to whatever is current.
      const precondition = object.metadata.resourceVersion;
      if (precondition && precondition !== String(current.revision)) {
        throw errors.modified(this.groupResource, ref.name);
      }
      try {
        const updated = await this.updateDecoded(context, current, object, {
          manager,
          dryRun,
          subresource: ref.subresource,
        });
        return { object: this.present(updated, context), created: false };
      } catch (error) {
        const retriable = isStaleWrite(error) && !precondition;
        if (!retriable || attempt >= PATCH_RETRIES) throw error;
      }
    }
  }

  private async apply(
    context: RequestContext,
    ref: ObjectRef,
    body: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    if (!options.fieldManager) {
      throw errors.invalid({ group: "meta.k8s.io", kind: "PatchOptions" }, "", [
        fieldError.required("fieldManager", "is required for apply patch"),
      ]);
    }
    const manager = options.fieldManager;
    const dryRun = options.dryRun === true;
    for (let attempt = 0; ; attempt++) {
      const config = decodeObject(
        this.definition,
        this.schema,
        structuredClone(body),
        options.fieldValidation,
        context,
      );
      this.checkIdentity(config, ref);
      const current = await this.storage.get(this.key(ref));
      const time = formatTimestamp(context.now);
      const resetFields = this.resetFields(ref.subresource);
      try {
        if (!current) {
          if (ref.subresource) throw errors.notFound(this.groupResource, ref.name);
          const object = serverSideApply({
            schema: this.fullSchema,
            live: undefined,
            config,
            manager,
            force: options.force === true,
            apiVersion: this.apiVersion,
            time,
            resetFields,
          });
          object.metadata.name = ref.name;
          this.adoptNamespace(object, ref.namespace);
          const created = await this.createDecoded(context, object, { manager, dryRun, managedFieldsDone: true });
          return { object: created, created: true };
        }
        const object = serverSideApply({
          schema: this.fullSchema,
          live: this.decode(current),
          config,
          manager,
          force: options.force === true,
          apiVersion: this.apiVersion,
          time,
          subresource: ref.subresource,
          resetFields,
        });
        const updated = await this.updateDecoded(context, current, object, {
          manager,
          dryRun,
          subresource: ref.subresource,
          managedFieldsDone: true,
        });
        return { object: this.present(updated, context), created: false };
      } catch (error) {
        const retriable = isStatusError(error) && (error.reason === "AlreadyExists" || isStaleWrite(error));
        if (!retriable || attempt >= PATCH_RETRIES) throw error;
      }
    }
  }

  /** What a patch chain needs: the unchained patch path, split at its write. */
  private chainHost(): ChainHost {
    return {
      read: async (key, ref) => {
        const current = await this.storage.get(key);
        if (!current) throw errors.notFound(this.groupResource, ref.name);
        return current;
      },
      prepare: async ({ context, ref, type, body, options }, base, committed) => {
        const live = this.decode(base);
        const patched = this.applyPatchBody(type, live, body);
        const object = decodeObject(this.definition, this.schema, patched, options.fieldValidation, context);
        this.checkIdentity(object, ref);
        // A resourceVersion in the patch is a precondition (chains never hand such a patch an uncommitted base).
        const precondition = object.metadata.resourceVersion;
        if (committed && precondition && precondition !== String(base.revision)) {
          throw errors.modified(this.groupResource, ref.name);
        }
        return this.prepareUpdate(context, base, object, {
          manager: managerName(options.fieldManager, context),
          dryRun: options.dryRun === true,
          subresource: ref.subresource,
        });
      },
      finish: async (current, prepared, context) => this.present(await this.finishUpdate(current, prepared), context),
      writeChain: async (key, values, expectedRevision) => {
        try {
          if (values.length === 1 || !this.storage.updateChain) {
            return [await this.storage.update(key, values[0], expectedRevision)];
          }
          return await this.storage.updateChain(key, values, expectedRevision);
        } catch (error) {
          throw this.mapStorageError(error, parseKey(key)?.name ?? "");
        }
      },
      encode: (object) => this.encode(object),
      present: (object, context) => this.present(object, context),
    };
  }

  // ---- delete ------------------------------------------------------------------------------------------------

  delete(context: RequestContext, ref: ObjectRef, options: DeleteOptions): Promise<DeleteResult> {
    return this.writes.run(this.key(ref), () => this.deleteNow(context, ref, options));
  }

  private async deleteNow(context: RequestContext, ref: ObjectRef, options: DeleteOptions): Promise<DeleteResult> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.storage.get(this.key(ref));
      if (!current) throw errors.notFound(this.groupResource, ref.name);
      const object = this.decode(current);
      this.checkDeletePreconditions(object, options);
      await this.definition.strategy.beforeDelete?.(object, context);
      try {
        return await this.deleteRecord(context, current, object, options);
      } catch (error) {
        if (!isStaleWrite(error) || attempt >= PATCH_RETRIES) throw error;
      }
    }
  }

  private async deleteRecord(
    context: RequestContext,
    current: StoredRecord,
    object: KubeObject,
    options: DeleteOptions,
  ): Promise<DeleteResult> {
    const meta = object.metadata;
    const finalizers = [...(meta.finalizers ?? [])];
    const policy = options.propagationPolicy ?? (options.orphanDependents ? "Orphan" : undefined);
    // Propagation by finalizer, as the garbage collector expects; Background needs none.
    const wanted = policy === "Orphan" ? ORPHAN_FINALIZER : policy === "Foreground" ? FOREGROUND_FINALIZER : undefined;
    const without = finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
    const nextFinalizers = policy ? (wanted ? [...without, wanted] : without) : finalizers;
    const grace = Math.max(0, options.gracePeriodSeconds ?? 0);
    const dryRun = options.dryRun === true;

    if (nextFinalizers.length === 0 && grace === 0 && !meta.deletionTimestamp) {
      if (!dryRun) {
        try {
          await this.storage.delete(current.key, current.revision);
        } catch (error) {
          throw this.mapStorageError(error, meta.name ?? "");
        }
      }
      return { removed: true, object: this.present(object, context) };
    }

    // Graceful deletion: set (or shorten, never extend) the deletion timestamp; finalizers hold the object.
    const requestedAt = new Date(context.now.getTime() + grace * 1000);
    const existing = meta.deletionTimestamp ? new Date(meta.deletionTimestamp) : undefined;
    const next = structuredClone(object);
    if (!existing || requestedAt < existing) {
      next.metadata.deletionTimestamp = formatTimestamp(requestedAt);
      next.metadata.deletionGracePeriodSeconds = grace;
    }
    if (!existing) next.metadata.generation = (meta.generation ?? 0) + 1;
    if (nextFinalizers.length) next.metadata.finalizers = nextFinalizers;
    else delete next.metadata.finalizers;
    if (dryRun) return { removed: false, object: this.present(next, context) };

    if (!next.metadata.finalizers?.length && deletionDue(next, context.now)) {
      try {
        await this.storage.delete(current.key, current.revision);
      } catch (error) {
        throw this.mapStorageError(error, meta.name ?? "");
      }
      return { removed: true, object: this.present(next, context) };
    }
    try {
      const stored = await this.storage.update(current.key, this.encode(next), current.revision);
      return { removed: false, object: this.present(this.decode(stored), context) };
    } catch (error) {
      throw this.mapStorageError(error, meta.name ?? "");
    }
  }

  /** Removes an object whose grace period has passed and whose finalizers are gone (called by the collector). */
  async reap(record: StoredRecord, now: Date): Promise<void> {
    const object = this.decode(record);
    if (!object.metadata.deletionTimestamp || object.metadata.finalizers?.length || !deletionDue(object, now)) return;
    try {
      await this.storage.delete(record.key, record.revision);
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
    }
  }

  async deleteCollection(context: RequestContext, list: ListOptions, options: DeleteOptions): Promise<KubeList> {
    const items: KubeObject[] = [];
    // Parsed once for every page.
    const selector = compileSelector(this.definition, list.labelSelector, list.fieldSelector, list.visible);
    let continueToken: string | undefined;
    do {
      const page = await listObjects(this, context, { ...list, limit: 500, continue: continueToken }, selector);
      for (const item of page.items) {
        try {
          const result = await this.delete(
            context,
            { namespace: item.metadata.namespace, name: item.metadata.name ?? "" },
            { ...options, preconditions: undefined },
          );
          items.push(result.object);
        } catch (error) {
          if (!(isStatusError(error) && error.reason === "NotFound")) throw error;
        }
      }
      continueToken = page.metadata.continue;
    } while (continueToken);
    return { apiVersion: this.apiVersion, kind: `${this.definition.kind}List`, metadata: {}, items };
  }

  // ---- helpers -----------------------------------------------------------------------------------------------

  key(ref: { namespace?: string; name: string }): string {
    return objectKey(this.definition, ref.namespace, ref.name);
  }

  /**
   * Stored form: the object without resourceVersion (the revision is the version), apiVersion, kind and metadata
   * first (the encoded reads of store-encoded.ts rely on that order).
   */
  encode(object: KubeObject): string {
    const rv = object.metadata.resourceVersion;
    if (rv === undefined) return JSON.stringify(canonicalOrder(object));
    delete object.metadata.resourceVersion;
    const text = JSON.stringify(canonicalOrder(object));
    object.metadata.resourceVersion = rv;
    return text;
  }

  /**
   * Decodes a record once for every watcher that receives it (the storage hub hands all watchers the same
   * record objects). The result is shared: callers must not mutate it.
   */
  decodeShared(record: StoredRecord): KubeObject {
    let object = this.sharedDecodes.get(record);
    if (!object) {
      object = this.decode(record);
      this.sharedDecodes.set(record, object);
    }
    return object;
  }

  /**
   * The record as every caller reads it, shared: only for stores whose presentation does not depend on the caller
   * (encoder.callerIndependent). Callers must not mutate it.
   */
  presentShared(record: StoredRecord, context: RequestContext): KubeObject {
    const present = this.definition.strategy.presentForRead;
    if (!present) return this.decodeShared(record);
    let object = this.sharedPresented.get(record);
    if (!object) {
      object = present(this.decodeShared(record), context);
      this.sharedPresented.set(record, object);
    }
    return object;
  }

  decode(record: StoredRecord): KubeObject {
    const object = JSON.parse(record.value) as KubeObject;
    object.metadata.resourceVersion = String(record.revision);
    return object;
  }

  present(object: KubeObject, context: RequestContext): KubeObject {
    return this.definition.strategy.presentForRead?.(object, context) ?? object;
  }

  private resetFields(subresource: string | undefined): "status" | "spec" | "none" {
    if (!this.definition.statusSubresource) return "none";
    return subresource === "status" ? "spec" : "status";
  }

  private managedFieldsAfterWrite(
    old: KubeObject | undefined,
    object: KubeObject,
    intent: WriteIntent,
    context: RequestContext,
  ) {
    const time = formatTimestamp(context.now);
    const compute = () =>
      updateManagedFields({
        schema: this.fullSchema,
        old,
        object,
        manager: intent.manager,
        apiVersion: this.apiVersion,
        time,
        subresource: intent.subresource,
        resetFields: this.resetFields(intent.subresource),
      });
    if (old) return compute();
    return this.createManagedFields.forCreate(object, intent.manager, intent.subresource, time, compute);
  }

  /** Fills the namespace from the URL; refuses a different one; clears it for cluster-scoped kinds. */
  private adoptNamespace(object: KubeObject, namespace: string | undefined): void {
    const meta = object.metadata;
    if (!this.definition.namespaced) {
      delete meta.namespace;
      return;
    }
    if (!meta.namespace) meta.namespace = namespace;
    else if (namespace && meta.namespace !== namespace) {
      throw errors.badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
  }

  /** URL and body must name the same object (PUT, patches, apply). */
  private checkIdentity(object: KubeObject, ref: ObjectRef): void {
    const meta = object.metadata;
    if (!meta.name) meta.name = ref.name;
    if (meta.name !== ref.name) {
      throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${ref.name})`);
    }
    this.adoptNamespace(object, ref.namespace);
  }

  /** DeleteOptions.preconditions (uid, resourceVersion) against the stored object: 409 when they do not hold. */
  checkDeletePreconditions(object: KubeObject, options: DeleteOptions): void {
    const pre = options.preconditions;
    const name = object.metadata.name ?? "";
    if (pre?.uid && pre.uid !== object.metadata.uid) {
      throw errors.conflict(
        this.groupResource,
        name,
        `Precondition failed: the UID in the precondition (${pre.uid}) does not match the UID in record (${object.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== object.metadata.resourceVersion) {
      throw errors.conflict(
        this.groupResource,
        name,
        `Precondition failed: the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${object.metadata.resourceVersion}). The object might have been modified`,
      );
    }
  }

  /** Setting blockOwnerDeletion on a reference needs delete permission on that owner (spec: 422 otherwise). */
  private async checkBlockOwnerDeletion(
    context: RequestContext,
    refs: OwnerReference[] | undefined,
    oldRefs: OwnerReference[],
  ): Promise<FieldError[]> {
    const errs: FieldError[] = [];
    for (const [i, ref] of (refs ?? []).entries()) {
      if (!isPlainObject(ref) || ref.blockOwnerDeletion !== true) continue;
      if (oldRefs.some((o) => o.uid === ref.uid && o.blockOwnerDeletion === true)) continue;
      const owner = this.resolveKind?.(ref.apiVersion, ref.kind);
      const decision = await context.authorizer.authorize({
        user: context.user,
        verb: "delete",
        group: owner?.group ?? ref.apiVersion.split("/").slice(0, -1).join("/"),
        version: owner?.version,
        resource: owner?.plural ?? ref.kind.toLowerCase(),
        name: ref.name,
        resourceRequest: true,
      });
      if (!decision.allowed) {
        errs.push(
          fieldError.forbidden(
            `metadata.ownerReferences[${i}].blockOwnerDeletion`,
            `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete: ${ref.kind} "${ref.name}"`,
          ),
        );
      }
    }
    return errs;
  }

  private validateOrThrow(name: string, fieldErrors: FieldError[]): void {
    if (fieldErrors.length > 0) throw errors.invalid(this.groupKind, name, fieldErrors);
  }

  /** A storage failure as this resource's Status error (src/apimachinery/storage-status.ts); others as they are. */
  mapStorageError(error: unknown, name: string): unknown {
    return storageStatus(error, { resource: this.groupResource, name });
  }
}

/** Writers racing an unconditional PUT: it tries this often over the newest object before answering 409. */
const UNCONDITIONAL_ATTEMPTS = 10;

/** What an update comes to before its write (see prepareUpdate). */
export type PreparedUpdate =
  | { kind: "unchanged" }
  | { kind: "dryRun"; object: KubeObject }
  | { kind: "delete"; object: KubeObject }
  | { kind: "write"; object: KubeObject };

/** A created object (resourceVersion set) and its stored record (absent on dry run). */
interface Created {
  object: KubeObject;
  record?: StoredRecord;
}

/** `force` belongs to server-side apply only. */
function checkNotForced(options: PatchOptions): void {
  if (options.force !== undefined) {
    throw errors.invalid({ group: "meta.k8s.io", kind: "PatchOptions" }, "", [
      fieldError.forbidden("force", "may not be specified for non-apply patch"),
    ]);
  }
}

/** A compare-and-swap lost to a concurrent writer (not a server-side apply conflict, which carries causes). */
function isStaleWrite(error: unknown): boolean {
  return error instanceof StatusError && error.reason === "Conflict" && !error.status.details?.causes;
}

/** Whether the grace period of a deleting object has passed. */
export function deletionDue(object: KubeObject, now: Date): boolean {
  const at = object.metadata.deletionTimestamp;
  return at !== undefined && new Date(at).getTime() <= now.getTime();
}

/** The field manager: the explicit one, else the User-Agent up to its first "/" (as Kubernetes does). */
function managerName(fieldManager: string | undefined, context: RequestContext): string {
  if (fieldManager) return fieldManager;
  const agent = context.userAgent ?? "";
  return agent.split("/")[0] || "unknown";
}

function dropUndefined(object: object): void {
  const record = object as Record<string, unknown>;
  for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
}
