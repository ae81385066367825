import { hash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { stableJson } from "../../utils/stable-json.ts";
import type { CompiledPatch } from "../patches/compile.ts";
import type { ReferencedObject } from "../patches/types.ts";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";
import { carryBack, hostSnapshotOf, reverseFieldPatches, virtualSnapshotOf } from "./carry-back.ts";
import { MAX_SELF_TRIGGERED_WRITES, OBJECT_NAME_ANNOTATION, OBJECT_NAMESPACE_ANNOTATION } from "./constants.ts";
import { desiredHostObject, hostObjectForVirtual, type SyncContext } from "./desired-state.ts";
import {
  HostWriteError,
  ImportError,
  NameCollisionError,
  NotConvergingError,
  RetryError,
  UnmanagedObjectError,
  VirtualWriteError,
} from "./errors.ts";
import { importedVirtualObject } from "./imported-object.ts";
import { currentHost, forgetDeliveredWrite, type KeyState } from "./key-state.ts";
import { formatKey, isOrphan, parseKey, type SyncKey } from "./keys.ts";
import { isImported } from "./kind-imported.ts";
import { describeError, statusCode, statusReason } from "./kube-client.ts";
import type { ObjectCache } from "./object-cache.ts";
import type { ReferenceTracker } from "./reference-tracker.ts";
import type { ResourceCalls } from "./resource-calls.ts";
import { semanticallyEqual } from "./semantic-equal.ts";
import type { StatsCounter } from "./stats.ts";
import type { SyncedKind, SyncView } from "./synced-kind.ts";
import { kindOf, referencedKind } from "./synced-kinds.ts";
import type { SyncedResource, WireObject } from "./types.ts";
import { backOperations, writeVirtualChange } from "./virtual-writes.ts";

/** One side of the sync: informer caches and API calls per resource. */
export interface Side {
  informers: Partial<Record<SyncedResource, ObjectCache>>;
  calls: Partial<Record<SyncedResource, ResourceCalls>>;
}

export interface ReconcilerOptions {
  /** Name of the virtual cluster (value of the managed-by label). */
  name: string;
  hostNamespace: string;
  context: SyncContext;
  /** Resources synced to the host. */
  enabled: Readonly<Partial<Record<SyncedResource, boolean>>>;
  /** Kinds synced whether referenced or not (`all: true`). */
  all: Readonly<Partial<Record<SyncedResource, boolean>>>;
  /** Host objects that are not ours, by resource (for imports): read by host namespace and name. */
  hostUnmanaged: Partial<Record<SyncedResource, ObjectCache>>;
  virtual: Side;
  host: Side;
  references: ReferenceTracker;
  stats: StatsCounter;
  enqueue(key: string): void;
}

const isManagedBy = (object: WireObject | undefined, name: string) =>
  object?.metadata?.labels?.[MANAGED_BY_LABEL] === name;

/** The virtual object a managed host object is the copy of, from the syncer's annotations. */
function holderOf(host: WireObject): { namespace: string; name: string } | undefined {
  const annotations = host.metadata?.annotations ?? {};
  const name = annotations[OBJECT_NAME_ANNOTATION];
  const namespace = annotations[OBJECT_NAMESPACE_ANNOTATION];
  return name !== undefined && namespace !== undefined ? { namespace, name } : undefined;
}

const calls = (side: Side, kind: SyncedKind): ResourceCalls => {
  const found = side.calls[kind.resource];
  if (!found) throw new Error(`no API calls for ${kind.resource}`);
  return found;
};

/**
 * Brings one key's host object to the state its virtual object asks for, by the kind's declaration (kind-*.ts). Only
 * host objects carrying this virtual cluster's managed-by label are ever updated or deleted. Nothing is written when
 * the host object is already in its desired state. Every decision reads the informers' current state.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #states = new Map<string, KeyState>();
  /** `<resource>/<host namespace>/<host name>` of referenced objects -> their key, while referenced. */
  readonly #byHostName = new Map<string, string>();
  /** The other way: a referenced object's key -> its entry in #byHostName. */
  readonly #hostNameOf = new Map<string, string>();
  /** Keys whose host name is held by another key's copy: synced again the moment the holder lets go. */
  readonly #waiting = new Map<string, Set<string>>();
  readonly #reversePatches = new Map<SyncedResource, readonly CompiledPatch[]>();
  /**
   * Keys with a host create or update in flight -> the resourceVersions of the host events that arrived meanwhile
   * (undefined for a delete), judged once the write answers: the echo of the write itself needs no sync.
   */
  readonly #inFlight = new Map<string, (string | undefined)[]>();

  constructor(options: ReconcilerOptions) {
    this.#options = options;
  }

  /**
   * The host informer saw an event for `key`. Returns whether the key needs a sync: not for the echo of our own last
   * write (the host object is the one we wrote and no patch of the resource reads the host object), which would
   * compute the same desired object again for nothing. The host usually delivers the echo before it answers the
   * write: an event that arrives while a write of the key is in flight is judged when the answer comes.
   */
  hostEvent(key: string, event: "add" | "update" | "delete", seen: WireObject): boolean {
    const state = this.#states.get(key);
    const resource = parseKey(key).resource;
    if (state) {
      const progress = this.#options.host.informers[resource]?.progress();
      forgetDeliveredWrite(state, event === "delete" ? undefined : seen, progress);
    }
    const applied = state?.applied;
    const resourceVersion = event === "delete" ? undefined : seen.metadata?.resourceVersion;
    const ours = resourceVersion !== undefined && applied?.resourceVersion === resourceVersion;
    if (this.#readsHost(resource)) return true;
    if (ours) return false;
    const pending = this.#inFlight.get(key);
    pending?.push(resourceVersion);
    return pending === undefined;
  }

  /**
   * The host informer of `resource` listed again (the host restarted, a watch failed or expired). Every key that
   * relies on a write of ours the informer had not delivered syncs again: currentHost() no longer trusts such a write
   * (it predates the list), and the list's differences cannot name every such key. A create the informer never saw,
   * deleted on the host before the list, is absent from the cache and from the list alike: no event, and the key would
   * look synced forever with no host object.
   */
  hostListed(resource: SyncedResource): void {
    const prefix = `${resource}/`;
    for (const [key, state] of this.#states) if (state.written && key.startsWith(prefix)) this.#options.enqueue(key);
  }

  /** Keeps our write's answer as the key's overlay only while the informer has not delivered it (currentHost()). */
  #wrote(kind: SyncedKind, state: KeyState, object: WireObject): void {
    const informer = this.#options.host.informers[kind.resource];
    const progress = informer?.progress();
    state.written = { object, epoch: progress?.epoch ?? 0 };
    const { namespace = "", name = "" } = object.metadata ?? {};
    forgetDeliveredWrite(state, informer?.get(namespace, name), progress);
  }

  /** Whether some patch of the resource can read `context.hostObject` (its desired object may follow the host's). */
  #readsHost(resource: SyncedResource): boolean {
    return this.#options.context.patches[resource]?.contextUse === "full";
  }

  /** Forgets the overlay of `key` (after a failure, so the next attempt reads the informer). */
  forgetWrite(key: string): void {
    const state = this.#states.get(key);
    if (state) delete state.written;
  }

  /** The virtual object of a key, if any (for events). */
  virtualObject(key: SyncKey): WireObject | undefined {
    return this.#options.virtual.informers[key.resource]?.get(key.namespace, key.name);
  }

  /**
   * Where a failure of `key` is reported: its virtual object, or, for a referenced object the virtual cluster does
   * not have (an import), the objects whose reference patches name it.
   */
  eventTargets(key: SyncKey): { object: WireObject; kind: SyncedKind }[] {
    const own = this.virtualObject(key);
    if (own) return [{ object: own, kind: kindOf(key.resource) }];
    return this.#options.references
      .referrersOf(formatKey(key.resource, key.namespace, key.name))
      .map(parseKey)
      .map((referrer) => ({ object: this.virtualObject(referrer), kind: kindOf(referrer.resource) }))
      .filter((target): target is { object: WireObject; kind: SyncedKind } => target.object !== undefined);
  }

  /** Computes the objects a virtual object references, without writing anything (start-up priming). */
  primeReferences(key: string): void {
    const parsed = parseKey(key);
    const virtual = this.virtualObject(parsed);
    if (!virtual || !this.#wanted(kindOf(parsed.resource), virtual)) return;
    try {
      const { references } = desiredHostObject(parsed.resource, virtual, undefined, this.#options.context);
      this.#trackReferences(key, references, false);
    } catch {
      // Reported when the object itself syncs.
    }
  }

  /** The key of a referenced object by its host name (an unmanaged host object that may be imported). */
  referencedKey(resource: SyncedResource, hostNamespace: string, hostName: string): string | undefined {
    const key = this.#byHostName.get(`${resource}/${hostNamespace}/${hostName}`);
    return key && this.#options.references.isReferenced(key) ? key : undefined;
  }

  /** Host names of referenced objects known (bounded by the objects referenced now). */
  get referencedHostNames(): number {
    return this.#byHostName.size;
  }

  /** Keys currently stopped as not converging. */
  get stalled(): number {
    let count = 0;
    for (const state of this.#states.values()) if (state.stalled) count++;
    return count;
  }

  async reconcile(key: string): Promise<void> {
    const parsed = parseKey(key);
    const kind = kindOf(parsed.resource);
    const { host, context } = this.#options;
    const orphan = isOrphan(parsed);
    const hostName = orphan ? parsed.name : context.translator.hostName(parsed.name, parsed.namespace);
    const hostNamespace = orphan ? this.#options.hostNamespace : context.translator.hostNamespace(parsed.namespace);
    const state = this.#states.get(key) ?? {};
    const informer = host.informers[kind.resource];
    const current = currentHost(informer?.get(hostNamespace, hostName), state, informer?.progress());
    let hostObject = isManagedBy(current, this.#options.name) ? current : undefined;
    const virtual = orphan ? undefined : this.virtualObject(parsed);

    if (kind.referenceable && !orphan && (isImported(virtual) || (!virtual && !hostObject))) {
      await this.#import(key, parsed, kind, virtual, { namespace: hostNamespace, name: hostName });
      return;
    }
    const wanted = virtual !== undefined && this.#wanted(kind, virtual);
    // A host object that is the copy of another virtual object with the same host name is never ours to change.
    const holder = hostObject && !orphan ? holderOf(hostObject) : undefined;
    if (holder && (holder.namespace !== parsed.namespace || holder.name !== parsed.name)) {
      const holderExists = this.#options.virtual.informers[kind.resource]?.get(holder.namespace, holder.name);
      if (holderExists || !wanted) {
        if (wanted) {
          this.#wait(formatKey(kind.resource, holder.namespace, holder.name), key);
          throw new NameCollisionError(kind.kind, hostNamespace, hostName, holder);
        }
        if (this.#references(kind.resource)) this.#trackReferences(key, [], true);
        this.#states.delete(key);
        return;
      }
      hostObject = { ...hostObject }; // the other one is gone: ours to take over
    }

    if (!wanted) {
      if (this.#references(kind.resource)) this.#trackReferences(key, [], true);
      if (hostObject) await this.#delete(key, kind, hostObject, state);
      if (!state.written) this.#states.delete(key);
      this.#release(key);
      return;
    }
    this.#states.set(key, state);
    // What the desired object is computed from besides the host object: the virtual object and the owner.
    const inputs = `${virtual.metadata?.resourceVersion ?? ""}/${context.owner?.uid ?? ""}`;
    // Stopped as not converging: nothing is written until the virtual object (or the owner) changes.
    if (state.stalled === inputs) return;
    delete state.stalled;
    // Nothing changed since this key was last synced to the end: not the virtual object, not the owner, not the host
    // object (still the version that sync left), and no patch reads the host object. Typically the echo of our own
    // write, delivered before the write's answer: no need to compute the desired object again.
    const settled = hostObject ? `${inputs}|${hostObject.metadata?.resourceVersion ?? ""}` : undefined;
    if (settled !== undefined && state.settled === settled && !this.#readsHost(kind.resource)) return;
    delete state.settled;
    let source = virtual;
    if (hostObject && state.last) source = await this.#carryBack(kind, source, hostObject, state);
    const desired = desiredHostObject(kind.resource, source, hostObject, context);
    if (this.#references(kind.resource)) this.#trackReferences(key, desired.references, true);
    // A digest, not the text: it is kept per key, and 4,000 texts of ~1 KiB were most of the syncer's memory. Plain
    // JSON (the object is built in a fixed order): a different order only costs a semantic comparison, never a write.
    const desiredDigest = hash("sha256", JSON.stringify(desired.object), "base64");
    let result: WireObject | undefined = hostObject;
    let rewrites = 0;
    if (!hostObject) {
      result = await this.#create(key, kind, desired.object, source, state);
    } else if (kind.replaces?.(desired.object, hostObject)) {
      await this.#delete(key, kind, hostObject, state);
      this.#states.set(key, state);
      result = await this.#create(key, kind, desired.object, source, state);
    } else if (!this.#inSync(kind, desired.object, desiredDigest, hostObject, state)) {
      rewrites = this.#selfTriggered(kind, hostObject, inputs, state);
      result = await this.#update(key, kind, desired.object, hostObject, state);
    }
    if (result !== hostObject) {
      state.applied = {
        desired: desiredDigest,
        resourceVersion: result?.metadata?.resourceVersion ?? "",
        inputs,
        rewrites,
      };
    }
    const hostNow = hostSnapshotOf(result, context.translator, this.#reverseFields(kind.resource));
    state.last = { virtual: virtualSnapshotOf(source, hostNow), host: hostNow };
    if (kind.fromHost && result) await this.#showHostDecisions(kind, source, result, state);
    // The virtual object the next sync will see is `source` only if nothing was carried back or shown.
    if (result && source === virtual) state.settled = `${inputs}|${result.metadata?.resourceVersion ?? ""}`;
  }

  /** `key` waits for `holder` to let go of the host name they share. */
  #wait(holder: string, key: string): void {
    let waiting = this.#waiting.get(holder);
    if (!waiting) {
      waiting = new Set();
      this.#waiting.set(holder, waiting);
    }
    waiting.add(key);
  }

  /** `holder` has no host copy any more: the keys waiting for its host name sync now, not at their next retry. */
  #release(holder: string): void {
    const waiting = this.#waiting.get(holder);
    if (!waiting) return;
    this.#waiting.delete(holder);
    for (const key of waiting) this.#options.enqueue(key);
  }

  #reverseFields(resource: SyncedResource): readonly CompiledPatch[] {
    let patches = this.#reversePatches.get(resource);
    if (!patches) {
      patches = reverseFieldPatches(this.#options.context.patches[resource]);
      this.#reversePatches.set(resource, patches);
    }
    return patches;
  }

  /**
   * Counts an update whose only cause is our own previous write (the host object is still what we wrote and the
   * inputs are the same): returns the count the update makes. At the bound the key is stopped instead, and the sync
   * fails once with NotConvergingError. Failed writes do not count.
   */
  #selfTriggered(kind: SyncedKind, hostObject: WireObject, inputs: string, state: KeyState): number {
    const applied = state.applied;
    const ours = applied?.resourceVersion === hostObject.metadata?.resourceVersion && applied?.inputs === inputs;
    if (!ours) return 0;
    const rewrites = (applied?.rewrites ?? 0) + 1;
    if (rewrites < MAX_SELF_TRIGGERED_WRITES) return rewrites;
    state.stalled = inputs;
    this.#options.stats.notConverging++;
    const hostName = hostObject.metadata?.name ?? "";
    // Thrown once: the retry finds the key stopped and returns without writing.
    throw new NotConvergingError(kind.kind, hostObject.metadata?.namespace ?? "", hostName, rewrites);
  }

  /**
   * Shows on the virtual object what the host decided (the kind's `fromHost`: a Service's cluster IP, node ports and
   * load balancer status). A change the virtual cluster refuses is reported once and not tried again while it stays
   * the same; the virtual object is left as it was.
   */
  async #showHostDecisions(kind: SyncedKind, virtual: WireObject, host: WireObject, state: KeyState): Promise<void> {
    const change = kind.fromHost?.(virtual, host);
    if (!change) return;
    const signature = hash("sha256", `${change.verb}\n${stableJson(change.object)}`, "base64");
    if (state.refusedBack === signature) return;
    const { namespace = "", name = "" } = virtual.metadata ?? {};
    const what = `virtual ${kind.kind} "${namespace}/${name}"`;
    try {
      await writeVirtualChange(calls(this.#options.virtual, kind), kind, change, virtual, this.#options.stats);
      delete state.refusedBack;
    } catch (error) {
      const code = statusCode(error);
      if (code === 404 || code === 409) throw new RetryError(`${what} changed meanwhile`);
      if (code === undefined || code >= 500 || code === 429) throw error;
      state.refusedBack = signature;
      throw new VirtualWriteError(`cannot give ${what} ${change.what}: ${describeError(error)}`);
    }
  }

  /** Whether a resource's patches can reference other objects. */
  #references(resource: SyncedResource): boolean {
    return (this.#options.context.patches[resource]?.patches ?? []).some((patch) => patch.mode === "reference");
  }

  /** The sync rules: which virtual objects have a host copy. */
  #wanted(kind: SyncedKind, virtual: WireObject): boolean {
    const { enabled, virtual: side, references, all } = this.#options;
    if (!enabled[kind.resource] || virtual.metadata?.deletionTimestamp) return false;
    const view: SyncView = {
      virtual: (resource, namespace, name) => side.informers[resource]?.get(namespace, name),
      referenced: (namespace, name) => references.isReferenced(formatKey(kind.resource, namespace, name)),
      all: all[kind.resource] === true,
    };
    return kind.wanted(virtual, view);
  }

  #inSync(kind: SyncedKind, desired: WireObject, desiredDigest: string, host: WireObject, state: KeyState): boolean {
    const applied = state.applied;
    const unchanged = applied?.resourceVersion === host.metadata?.resourceVersion && applied?.desired === desiredDigest;
    return unchanged || semanticallyEqual(kind, desired, host);
  }

  /**
   * Host-side changes since the last sync go back to the virtual object as carry-back.ts decides (reverse patches,
   * unpatched labels and annotations); returns the virtual object as updated.
   */
  async #carryBack(kind: SyncedKind, virtual: WireObject, host: WireObject, state: KeyState): Promise<WireObject> {
    const { context } = this.#options;
    const hostNow = hostSnapshotOf(host, context.translator, this.#reverseFields(kind.resource));
    // Common case first: nothing changed on the host, so no reverse patch needs to run.
    if (isDeepStrictEqual(hostNow, state.last?.host)) return virtual;
    const reversed = hostObjectForVirtual(kind.resource, host, virtual, context).object;
    const back = carryBack({
      virtual,
      host,
      hostNow,
      reversed,
      last: state.last,
      translator: context.translator,
      patches: context.patches[kind.resource],
    });
    const operations = back ? backOperations(virtual, back) : [];
    if (operations.length === 0) return virtual;
    const { namespace = "", name = "", resourceVersion } = virtual.metadata ?? {};
    operations.unshift({ op: "test", path: "/metadata/resourceVersion", value: resourceVersion });
    let updated: WireObject;
    try {
      updated = await calls(this.#options.virtual, kind).jsonPatch(namespace, name, operations);
    } catch (error) {
      const what = `virtual ${kind.kind} "${namespace}/${name}"`;
      // A stale cache fails the test operation (409 or 422): the next attempt reads the newer object.
      const code = statusCode(error);
      if (code === 409 || code === 422) throw new RetryError(`${what} changed meanwhile`);
      throw new Error(`cannot update ${what}: ${kind.confidential ? `HTTP ${code ?? "error"}` : describeError(error)}`);
    }
    this.#options.stats.write("virtual", kind.kind, "patch");
    return updated;
  }

  async #create(
    key: string,
    kind: SyncedKind,
    desired: WireObject,
    virtual: WireObject,
    state: KeyState,
  ): Promise<WireObject> {
    const { host, name } = this.#options;
    const hostNamespace = desired.metadata?.namespace ?? this.#options.hostNamespace;
    const hostName = desired.metadata?.name ?? "";
    const bodies = kind.createBodies?.(desired, virtual) ?? [desired];
    for (let i = 0; ; i++) {
      try {
        const created = await this.#hostWrite(key, () => calls(host, kind).create(hostNamespace, bodies[i]));
        this.#options.stats.write("host", kind.kind, "create");
        this.#wrote(kind, state, created);
        return created;
      } catch (error) {
        const code = statusCode(error);
        if (code === 422 && i < bodies.length - 1) continue; // refused what it asked for: the next body asks less
        if (code !== 409) {
          throw new HostWriteError("create", kind.kind, hostNamespace, hostName, error, kind.confidential);
        }
        // Taken: by an object we do not manage (never touched), or ours while the informer lags behind.
        const existing = await calls(host, kind)
          .read(hostNamespace, hostName)
          .catch(() => undefined);
        if (existing && !isManagedBy(existing, name)) {
          throw new UnmanagedObjectError(kind.kind, hostNamespace, hostName, `${MANAGED_BY_LABEL}=${name}`);
        }
        this.forgetWrite(key);
        throw new RetryError(`host ${kind.kind} "${hostNamespace}/${hostName}" appeared meanwhile`);
      }
    }
  }

  async #update(
    key: string,
    kind: SyncedKind,
    desired: WireObject,
    current: WireObject,
    state: KeyState,
  ): Promise<WireObject> {
    const { host } = this.#options;
    const hostNamespace = current.metadata?.namespace ?? this.#options.hostNamespace;
    const hostName = current.metadata?.name ?? "";
    const bodies = kind.updateBodies?.(desired, current) ?? [
      { ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion } },
    ];
    for (let i = 0; ; i++) {
      try {
        const updated = await this.#hostWrite(key, () => calls(host, kind).replace(hostNamespace, hostName, bodies[i]));
        this.#options.stats.write("host", kind.kind, "update");
        this.#wrote(kind, state, updated);
        return updated;
      } catch (error) {
        const code = statusCode(error);
        if (code === 422 && i < bodies.length - 1) continue;
        this.forgetWrite(key);
        if (code === 409 && statusReason(error) !== "AlreadyExists") {
          throw new RetryError(`host ${kind.kind} "${hostNamespace}/${hostName}" changed meanwhile`);
        }
        // Deleted after the view the update came from: not a failure. The retry reads the informer again; once it has
        // the delete (its event queues the key at once, a re-list reports it too) the object is created.
        if (code === 404) {
          throw new RetryError(`host ${kind.kind} "${hostNamespace}/${hostName}" was deleted meanwhile`);
        }
        throw new HostWriteError("update", kind.kind, hostNamespace, hostName, error, kind.confidential);
      }
    }
  }

  /**
   * A host create or update of `key`. The host events that arrived meanwhile queue the key again unless they were
   * the echo of this write (the resourceVersion it answered with); after a failure, every one does.
   */
  async #hostWrite(key: string, write: () => Promise<WireObject>): Promise<WireObject> {
    const seen: (string | undefined)[] = [];
    this.#inFlight.set(key, seen);
    let written: string | undefined;
    try {
      const result = await write();
      written = result.metadata?.resourceVersion;
      return result;
    } finally {
      this.#inFlight.delete(key);
      if (seen.some((resourceVersion) => resourceVersion === undefined || resourceVersion !== written)) {
        this.#options.enqueue(key);
      }
    }
  }

  async #delete(key: string, kind: SyncedKind, current: WireObject, state: KeyState): Promise<void> {
    const hostNamespace = current.metadata?.namespace ?? this.#options.hostNamespace;
    const hostName = current.metadata?.name ?? "";
    const uid = current.metadata?.uid;
    try {
      await calls(this.#options.host, kind).delete(hostNamespace, hostName, uid);
      this.#options.stats.write("host", kind.kind, "delete");
    } catch (error) {
      const code = statusCode(error);
      if (code !== 404 && code !== 409) {
        throw new HostWriteError("delete", kind.kind, hostNamespace, hostName, error, kind.confidential);
      }
      // Gone already, or replaced by a new object (uid precondition): nothing of ours to delete.
    }
    state.written = { deletedUid: uid ?? "" };
    delete state.applied;
    delete state.last;
    this.#states.set(key, state);
  }

  /** Records which objects an object references; the ones that gained or lost a reference re-sync. */
  #trackReferences(key: string, references: ReferencedObject[], enqueue: boolean): void {
    const targets: string[] = [];
    for (const reference of references) {
      const kind = referencedKind(reference.apiVersion, reference.kind);
      if (!kind || !this.#options.enabled[kind.resource]) continue;
      const target = formatKey(kind.resource, reference.source.namespace, reference.source.name);
      targets.push(target);
      this.#rememberHostName(target, `${kind.resource}/${reference.target.namespace}/${reference.target.name}`);
    }
    const changed = this.#options.references.set(key, targets);
    for (const target of changed) if (!this.#options.references.isReferenced(target)) this.#forgetHostName(target);
    if (enqueue) for (const target of changed) this.#options.enqueue(target);
  }

  #rememberHostName(target: string, hostName: string): void {
    const before = this.#hostNameOf.get(target);
    if (before !== undefined && before !== hostName && this.#byHostName.get(before) === target) {
      this.#byHostName.delete(before);
    }
    this.#byHostName.set(hostName, target);
    this.#hostNameOf.set(target, hostName);
  }

  /** A referenced object no longer referenced: its host name goes too (a tenant renaming references must not grow it). */
  #forgetHostName(target: string): void {
    const hostName = this.#hostNameOf.get(target);
    if (hostName !== undefined && this.#byHostName.get(hostName) === target) this.#byHostName.delete(hostName);
    this.#hostNameOf.delete(target);
  }

  /**
   * A referenced object that the virtual cluster does not have, but the host has under the reference's host name (an
   * object not made by us): imported into the virtual cluster (labelled with its host namespace), kept in step with
   * the host object, and removed when the reference or the host object goes.
   */
  async #import(
    key: string,
    parsed: SyncKey,
    kind: SyncedKind,
    virtual: WireObject | undefined,
    hostName: { namespace: string; name: string },
  ): Promise<void> {
    const { namespace, name } = parsed;
    const side = calls(this.#options.virtual, kind);
    const referenced = this.#options.enabled[kind.resource] === true && this.#options.references.isReferenced(key);
    const source = referenced
      ? this.#options.hostUnmanaged[kind.resource]?.get(hostName.namespace, hostName.name)
      : undefined;
    const usable = source && !isManagedBy(source, this.#options.name) ? source : undefined;
    if (!usable) {
      if (virtual) {
        await side.delete(namespace, name, virtual.metadata?.uid).catch((error) => {
          if (statusCode(error) !== 404 && statusCode(error) !== 409) throw error;
        });
        this.#options.stats.write("virtual", kind.kind, "delete");
      }
      if (referenced && !virtual) {
        throw new ImportError(
          `referenced ${kind.kind} "${namespace}/${name}" exists neither in the virtual cluster nor on the host ` +
            `(as "${hostName.namespace}/${hostName.name}"), so there is nothing to sync or import`,
        );
      }
      return;
    }
    const wanted = importedVirtualObject(usable, kind.kind, { namespace, name }, hostName);
    if (virtual && stableJson(importedView(virtual)) === stableJson(importedView(wanted))) return;
    try {
      if (virtual) {
        wanted.metadata = { ...wanted.metadata, resourceVersion: virtual.metadata?.resourceVersion };
        await side.replace(namespace, name, wanted);
        this.#options.stats.write("virtual", kind.kind, "update");
      } else {
        await side.create(namespace, wanted);
        this.#options.stats.write("virtual", kind.kind, "create");
      }
    } catch (error) {
      const code = statusCode(error);
      if (code === 409) throw new RetryError(`virtual ${kind.kind} "${namespace}/${name}" changed meanwhile`);
      const detail = kind.confidential ? `HTTP ${code ?? "error"}` : describeError(error);
      throw new ImportError(
        `cannot import host ${kind.kind} "${hostName.namespace}/${hostName.name}" as "${namespace}/${name}": ${detail}`,
      );
    }
  }
}

/** The fields an import writes, for comparing an imported virtual object with what it should be. */
function importedView(object: WireObject): unknown {
  const { labels, annotations } = object.metadata ?? {};
  const { metadata: _metadata, apiVersion: _apiVersion, kind: _kind, ...content } = object;
  return { labels, annotations, content };
}
