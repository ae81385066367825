import { hash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { ReferencedObject } from "../patches/types.ts";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";
import {
  IMPORTED_LABEL,
  MAX_SELF_TRIGGERED_WRITES,
  OBJECT_NAME_ANNOTATION,
  OBJECT_NAMESPACE_ANNOTATION,
} from "./constants.ts";
import { desiredHostObject, hostObjectForVirtual, type SyncContext } from "./desired-state.ts";
import {
  HostWriteError,
  ImportError,
  NameCollisionError,
  NotConvergingError,
  RetryError,
  UnmanagedObjectError,
} from "./errors.ts";
import { hasSelector } from "./host-service.ts";
import { importedVirtualObject } from "./imported-object.ts";
import type { Informer } from "./informer.ts";
import { currentHost, type KeyState } from "./key-state.ts";
import { formatKey, isOrphan, parseKey, type SyncKey } from "./keys.ts";
import { describeError, statusCode, statusReason } from "./kube-client.ts";
import type { ReferenceTracker } from "./reference-tracker.ts";
import type { JsonPatchOperation, ResourceCalls } from "./resource-calls.ts";
import { hostSnapshotOf, reverseMetadata, snapshotOf } from "./reverse-metadata.ts";
import { semanticallyEqual, updateBody } from "./semantic-equal.ts";
import { stableJson } from "./stable-json.ts";
import type { StatsCounter } from "./stats.ts";
import { KIND_OF, resourceOfKind, type SyncedResource, type WireObject } from "./types.ts";

/** One side of the sync: informer caches and API calls per resource. */
export interface Side {
  informers: Partial<Record<SyncedResource, Informer>>;
  calls: Record<SyncedResource, ResourceCalls>;
}

export interface ReconcilerOptions {
  /** Name of the virtual cluster (value of the managed-by label). */
  name: string;
  hostNamespace: string;
  context: SyncContext;
  /** Resources synced to the host. */
  enabled: Readonly<Record<SyncedResource, boolean>>;
  /** ConfigMaps and Secrets synced whether referenced or not (`all: true`). */
  all: Readonly<Partial<Record<SyncedResource, boolean>>>;
  /** Host objects that are not ours, by resource (for imports): read by host namespace and name. */
  hostUnmanaged: Partial<Record<SyncedResource, Informer>>;
  virtual: Side;
  host: Side;
  references: ReferenceTracker;
  stats: StatsCounter;
  enqueue(key: string): void;
}

/** The virtual cluster's own API server Service and Endpoints: written into the virtual cluster, never synced. */
const isKubernetesService = (namespace: string, name: string) => namespace === "default" && name === "kubernetes";

const isManagedBy = (object: WireObject | undefined, name: string) =>
  object?.metadata?.labels?.[MANAGED_BY_LABEL] === name;

/** A virtual object the syncer imported from the host: owned by the host object, never synced toward it. */
const isImported = (object: WireObject | undefined) => object?.metadata?.labels?.[IMPORTED_LABEL] !== undefined;

/** Secrets the virtual API server makes for itself: never synced even with `all: true`. */
const isServiceAccountToken = (object: WireObject) => object.type === "kubernetes.io/service-account-token";

/** The virtual object a managed host object is the copy of, from the syncer's annotations. */
function ownerOf(host: WireObject): { namespace: string; name: string } | undefined {
  const annotations = host.metadata?.annotations ?? {};
  const name = annotations[OBJECT_NAME_ANNOTATION];
  const namespace = annotations[OBJECT_NAMESPACE_ANNOTATION];
  return name !== undefined && namespace !== undefined ? { namespace, name } : undefined;
}

/**
 * Brings one key's host object to the state its virtual object asks for. Only host objects carrying this virtual
 * cluster's managed-by label are ever updated or deleted. Nothing is written when the host object is already in
 * its desired state.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #states = new Map<string, KeyState>();
  /** `<resource>/<host namespace>/<host name>` of referenced objects -> their key. */
  readonly #byHostName = new Map<string, string>();

  constructor(options: ReconcilerOptions) {
    this.#options = options;
  }

  /**
   * The host informer saw an event for `key`: drops our write overlay once the informer has caught up. Returns
   * whether the key needs a sync: not for the echo of our own last write (the host object is the one we wrote and
   * no patch of the resource reads the host object), which would compute the same desired object again for nothing.
   */
  hostEvent(
    key: string,
    event: "add" | "update" | "delete",
    seen: WireObject,
    caughtUp: (state: NonNullable<KeyState["written"]>) => boolean,
  ): boolean {
    const state = this.#states.get(key);
    if (state?.written && caughtUp(state.written)) {
      delete state.written;
      if (!state.last && !state.applied) this.#states.delete(key); // a deleted object: nothing left to remember
    }
    const ours =
      event !== "delete" &&
      state !== undefined &&
      !state.written &&
      state.applied !== undefined &&
      state.applied.resourceVersion === seen.metadata?.resourceVersion;
    return !ours || this.#readsHost(parseKey(key).resource);
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
  eventTargets(key: SyncKey): { object: WireObject; resource: SyncedResource }[] {
    const own = this.virtualObject(key);
    if (own) return [{ object: own, resource: key.resource }];
    return this.#options.references
      .referrersOf(formatKey(key.resource, key.namespace, key.name))
      .map(parseKey)
      .map((referrer) => ({ object: this.virtualObject(referrer), resource: referrer.resource }))
      .filter((target): target is { object: WireObject; resource: SyncedResource } => target.object !== undefined);
  }

  /** Computes the objects a virtual object references, without writing anything (start-up priming). */
  primeReferences(key: string): void {
    const parsed = parseKey(key);
    const virtual = this.virtualObject(parsed);
    if (!virtual || !this.#wanted(parsed, virtual)) return;
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

  /** Keys currently stopped as not converging. */
  get stalled(): number {
    let count = 0;
    for (const state of this.#states.values()) if (state.stalled) count++;
    return count;
  }

  async reconcile(key: string): Promise<void> {
    const parsed = parseKey(key);
    const { resource } = parsed;
    const { host, context } = this.#options;
    const hostName = isOrphan(parsed) ? parsed.name : context.translator.hostName(parsed.name, parsed.namespace);
    const hostNamespace = isOrphan(parsed)
      ? this.#options.hostNamespace
      : context.translator.hostNamespace(parsed.namespace);
    const state = this.#states.get(key) ?? {};
    const cached = host.informers[resource]?.get(hostNamespace, hostName);
    const current = currentHost(cached, state);
    let hostObject = isManagedBy(current, this.#options.name) ? current : undefined;
    const virtual = isOrphan(parsed) ? undefined : this.virtualObject(parsed);

    const importable = !isOrphan(parsed) && (resource === "configmaps" || resource === "secrets");
    if (importable && (isImported(virtual) || (!virtual && !hostObject))) {
      await this.#import(key, parsed, virtual, { namespace: hostNamespace, name: hostName });
      return;
    }
    // A host object that is the copy of another virtual object with the same host name is never ours to change.
    const other = hostObject ? ownerOf(hostObject) : undefined;
    const collides = other !== undefined && (other.namespace !== parsed.namespace || other.name !== parsed.name);
    if (collides && !isOrphan(parsed)) {
      const otherExists = this.#options.virtual.informers[resource]?.get(other.namespace, other.name) !== undefined;
      if (otherExists || !virtual || !this.#wanted(parsed, virtual)) {
        if (virtual && this.#wanted(parsed, virtual)) {
          throw new NameCollisionError(KIND_OF[resource], hostNamespace, hostName, other);
        }
        if (this.#references(resource)) this.#trackReferences(key, [], true);
        this.#states.delete(key);
        return;
      }
      hostObject = { ...hostObject }; // the other one is gone: ours to take over
    }

    if (!virtual || !this.#wanted(parsed, virtual)) {
      if (this.#references(resource)) this.#trackReferences(key, [], true);
      if (hostObject) await this.#delete(key, resource, hostObject, state);
      if (!state.written) this.#states.delete(key);
      return;
    }
    this.#states.set(key, state);
    const virtualVersion = virtual.metadata?.resourceVersion ?? "";
    // Stopped as not converging: nothing is written until the virtual object changes.
    if (state.stalled === virtualVersion) return;
    delete state.stalled;
    let source = virtual;
    if (hostObject && state.last) source = await this.#carryBack(resource, source, hostObject, state);
    const desired = desiredHostObject(resource, source, hostObject, context);
    if (this.#references(resource)) this.#trackReferences(key, desired.references, true);
    // A digest, not the text: it is kept per key, and 4,000 texts of ~1 KiB were most of the syncer's memory.
    const desiredDigest = hash("sha256", stableJson(desired.object), "base64");
    let result: WireObject | undefined = hostObject;
    if (!hostObject) {
      result =
        resource === "services"
          ? await this.#createService(key, source, desired.object, state)
          : await this.#create(key, resource, desired.object, state);
    } else if (!this.#inSync(resource, desired.object, desiredDigest, hostObject, state)) {
      this.#countSelfTriggered(parsed, hostObject, virtualVersion, state);
      result = await this.#update(key, resource, desired.object, hostObject, state);
    } else {
      delete state.rewrites;
    }
    if (result !== hostObject) {
      state.applied = { desired: desiredDigest, resourceVersion: result?.metadata?.resourceVersion ?? "" };
    }
    state.last = { virtual: snapshotOf(source), host: hostSnapshotOf(result, context.translator) };
    if (resource === "services" && result) await this.#showHostClusterIP(source, result, state);
  }

  /**
   * Counts an update whose only cause is our own previous write (the host object is still what we wrote, the
   * virtual object is unchanged); at the bound the key is stopped and the sync fails once with NotConvergingError.
   */
  #countSelfTriggered(parsed: SyncKey, hostObject: WireObject, virtualVersion: string, state: KeyState): void {
    const ours = state.applied?.resourceVersion === hostObject.metadata?.resourceVersion;
    const rewrites = state.rewrites;
    if (!ours || rewrites?.virtualVersion !== virtualVersion) {
      state.rewrites = { virtualVersion, count: ours ? 1 : 0 };
      return;
    }
    rewrites.count++;
    if (rewrites.count < MAX_SELF_TRIGGERED_WRITES) return;
    state.stalled = virtualVersion;
    delete state.rewrites;
    this.#options.stats.notConverging++;
    const hostName = hostObject.metadata?.name ?? "";
    // Thrown once: the retry finds the key stopped and returns without writing.
    throw new NotConvergingError(
      KIND_OF[parsed.resource],
      hostObject.metadata?.namespace ?? "",
      hostName,
      rewrites.count,
    );
  }

  /**
   * Creates a host Service asking for the virtual Service's cluster IP first, so both sides usually agree without
   * recreating the virtual Service; a host that refuses that address (taken, or outside its range) picks its own.
   */
  async #createService(key: string, virtual: WireObject, desired: WireObject, state: KeyState): Promise<WireObject> {
    const ip = (virtual.spec as { clusterIP?: string } | undefined)?.clusterIP;
    if (!ip || ip === "None") return this.#create(key, "services", desired, state);
    const asking = { ...desired, spec: { ...(desired.spec as object), clusterIP: ip, clusterIPs: [ip] } };
    try {
      return await this.#create(key, "services", asking, state);
    } catch (error) {
      if (!(error instanceof HostWriteError) || statusCode(error.cause) !== 422) throw error;
      return this.#create(key, "services", desired, state);
    }
  }

  /**
   * The virtual Service shows the host Service's cluster IP (what Pods on the host reach). A cluster IP cannot
   * change in place, so the virtual Service is recreated with it, as upstream does.
   */
  async #showHostClusterIP(virtual: WireObject, host: WireObject, state: KeyState): Promise<void> {
    const hostIP = (host.spec as { clusterIP?: string } | undefined)?.clusterIP;
    const spec = (virtual.spec ?? {}) as { clusterIP?: string; clusterIPs?: string[]; type?: string };
    if (!hostIP || hostIP === "None" || spec.clusterIP === "None" || spec.type === "ExternalName") return;
    if (spec.clusterIP === hostIP) return;
    const { namespace = "", name = "", uid } = virtual.metadata ?? {};
    const calls = this.#options.virtual.calls.services;
    const metadata = { ...virtual.metadata };
    for (const field of ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"] as const) {
      delete metadata[field];
    }
    const body: WireObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata,
      spec: { ...spec, clusterIP: hostIP, clusterIPs: [hostIP] },
    };
    // Refused once (outside the virtual cluster's service range, or taken there): not tried again for this IP.
    if (state.refusedClusterIP === hostIP) return;
    try {
      await calls.delete(namespace, name, uid);
      this.#options.stats.write("virtual", "Service", "delete");
    } catch (error) {
      const code = statusCode(error);
      if (code === 404 || code === 409)
        throw new RetryError(`virtual Service "${namespace}/${name}" changed meanwhile`);
      throw error;
    }
    try {
      await calls.create(namespace, body);
      this.#options.stats.write("virtual", "Service", "create");
    } catch (error) {
      // Put the Service back as it was (its own address is free again), then report why the host IP cannot be shown.
      state.refusedClusterIP = hostIP;
      await calls.create(namespace, { ...body, spec: { ...spec } });
      this.#options.stats.write("virtual", "Service", "create");
      throw new ImportError(
        `cannot give virtual Service "${namespace}/${name}" the host cluster IP ${hostIP}: ${describeError(error)}`,
      );
    }
  }

  /** Whether a resource's patches can reference other objects. */
  #references(resource: SyncedResource): boolean {
    return (this.#options.context.patches[resource]?.patches ?? []).some((patch) => patch.mode === "reference");
  }

  /** The sync rules: which virtual objects have a host copy. */
  #wanted(key: SyncKey, virtual: WireObject): boolean {
    const { enabled, virtual: side } = this.#options;
    if (!enabled[key.resource] || virtual.metadata?.deletionTimestamp) return false;
    switch (key.resource) {
      case "services":
        return !isKubernetesService(key.namespace, key.name);
      case "endpoints": {
        if (isKubernetesService(key.namespace, key.name)) return false;
        const service = side.informers.services?.get(key.namespace, key.name);
        // No Service: skipped. A selector: the host's endpoints controller owns the host Endpoints.
        return service !== undefined && !hasSelector(service);
      }
      case "configmaps":
      case "secrets":
        if (isImported(virtual) || isServiceAccountToken(virtual)) return false;
        return (
          this.#options.all[key.resource] === true ||
          this.#options.references.isReferenced(formatKey(key.resource, key.namespace, key.name))
        );
    }
  }

  #inSync(
    resource: SyncedResource,
    desired: WireObject,
    desiredDigest: string,
    host: WireObject,
    state: KeyState,
  ): boolean {
    const applied = state.applied;
    const unchanged = applied?.resourceVersion === host.metadata?.resourceVersion && applied?.desired === desiredDigest;
    if (unchanged) return true;
    if (resource === "secrets" && (desired.type ?? "Opaque") !== (host.type ?? "Opaque")) return false;
    return semanticallyEqual(resource, desired, host);
  }

  /**
   * Host-side label and annotation changes since the last sync go back to the virtual object (through the reverse
   * patches); returns the virtual object as updated.
   */
  async #carryBack(
    resource: SyncedResource,
    virtual: WireObject,
    host: WireObject,
    state: KeyState,
  ): Promise<WireObject> {
    const { context } = this.#options;
    // Common case first: nothing changed on the host, so no reverse patch needs to run.
    if (isDeepStrictEqual(hostSnapshotOf(host, context.translator), state.last?.host)) return virtual;
    const reversed = hostObjectForVirtual(resource, host, virtual, context).object;
    const metadata = reverseMetadata({ virtual, host, reversed, last: state.last, translator: context.translator });
    if (!metadata) return virtual;
    const { namespace = "", name = "", resourceVersion } = virtual.metadata ?? {};
    const operations: JsonPatchOperation[] = [
      { op: "test", path: "/metadata/resourceVersion", value: resourceVersion },
      { op: "add", path: "/metadata/labels", value: metadata.labels },
      { op: "add", path: "/metadata/annotations", value: metadata.annotations },
    ];
    let updated: WireObject;
    try {
      updated = await this.#options.virtual.calls[resource].jsonPatch(namespace, name, operations);
    } catch (error) {
      const what = `virtual ${KIND_OF[resource]} "${namespace}/${name}"`;
      // A stale cache fails the test operation (409 or 422): the next attempt reads the newer object.
      const code = statusCode(error);
      if (code === 409 || code === 422) throw new RetryError(`${what} changed meanwhile`);
      throw new Error(
        `cannot update ${what}: ${resource === "secrets" ? `HTTP ${code ?? "error"}` : describeError(error)}`,
      );
    }
    this.#options.stats.write("virtual", KIND_OF[resource], "patch");
    return updated;
  }

  async #create(key: string, resource: SyncedResource, desired: WireObject, state: KeyState): Promise<WireObject> {
    const { host, name } = this.#options;
    const hostNamespace = desired.metadata?.namespace ?? this.#options.hostNamespace;
    const kind = KIND_OF[resource];
    const hostName = desired.metadata?.name ?? "";
    try {
      const created = await host.calls[resource].create(hostNamespace, desired);
      this.#options.stats.write("host", kind, "create");
      state.written = { object: created };
      return created;
    } catch (error) {
      if (statusCode(error) !== 409) {
        throw new HostWriteError("create", kind, hostNamespace, hostName, error, resource === "secrets");
      }
      // Taken: by an object we do not manage (never touched), or ours while the informer lags behind.
      const existing = await host.calls[resource].read(hostNamespace, hostName).catch(() => undefined);
      if (existing && !isManagedBy(existing, name)) {
        throw new UnmanagedObjectError(kind, hostNamespace, hostName, `${MANAGED_BY_LABEL}=${name}`);
      }
      this.forgetWrite(key);
      throw new RetryError(`host ${kind} "${hostNamespace}/${hostName}" appeared meanwhile`);
    }
  }

  async #update(
    key: string,
    resource: SyncedResource,
    desired: WireObject,
    current: WireObject,
    state: KeyState,
  ): Promise<WireObject> {
    const { host } = this.#options;
    const hostNamespace = current.metadata?.namespace ?? this.#options.hostNamespace;
    const kind = KIND_OF[resource];
    const hostName = current.metadata?.name ?? "";
    // A Secret's type cannot change in place.
    if (resource === "secrets" && (desired.type ?? "Opaque") !== (current.type ?? "Opaque")) {
      await this.#delete(key, resource, current, state);
      return this.#create(key, resource, desired, state);
    }
    try {
      const updated = await host.calls[resource].replace(
        hostNamespace,
        hostName,
        updateBody(resource, desired, current),
      );
      this.#options.stats.write("host", kind, "update");
      state.written = { object: updated };
      return updated;
    } catch (error) {
      this.forgetWrite(key);
      if (statusCode(error) === 409 && statusReason(error) !== "AlreadyExists") {
        throw new RetryError(`host ${kind} "${hostNamespace}/${hostName}" changed meanwhile`);
      }
      throw new HostWriteError("update", kind, hostNamespace, hostName, error, resource === "secrets");
    }
  }

  async #delete(key: string, resource: SyncedResource, current: WireObject, state: KeyState): Promise<void> {
    const { host } = this.#options;
    const hostNamespace = current.metadata?.namespace ?? this.#options.hostNamespace;
    const kind = KIND_OF[resource];
    const hostName = current.metadata?.name ?? "";
    const uid = current.metadata?.uid;
    try {
      await host.calls[resource].delete(hostNamespace, hostName, uid);
      this.#options.stats.write("host", kind, "delete");
    } catch (error) {
      const code = statusCode(error);
      if (code !== 404 && code !== 409) {
        throw new HostWriteError("delete", kind, hostNamespace, hostName, error, resource === "secrets");
      }
      // Gone already, or replaced by a new object (uid precondition): nothing of ours to delete.
    }
    state.written = { deletedUid: uid ?? "" };
    delete state.applied;
    delete state.last;
    this.#states.set(key, state);
  }

  /** Records which ConfigMaps and Secrets an object references; the ones that gained or lost a reference re-sync. */
  #trackReferences(key: string, references: ReferencedObject[], enqueue: boolean): void {
    const targets: string[] = [];
    for (const reference of references) {
      const resource = resourceOfKind(reference.apiVersion, reference.kind);
      if (resource !== "configmaps" && resource !== "secrets") continue;
      if (!this.#options.enabled[resource]) continue;
      const target = formatKey(resource, reference.source.namespace, reference.source.name);
      targets.push(target);
      this.#byHostName.set(`${resource}/${reference.target.namespace}/${reference.target.name}`, target);
    }
    const changed = this.#options.references.set(key, targets);
    if (enqueue) for (const target of changed) this.#options.enqueue(target);
  }

  /**
   * A referenced ConfigMap or Secret that the virtual cluster does not have, but the host has under the
   * reference's host name (an object not made by us): imported into the virtual cluster (labelled with its host
   * namespace), kept in step with the host object, and removed when the reference or the host object goes.
   */
  async #import(
    key: string,
    parsed: SyncKey,
    virtual: WireObject | undefined,
    hostName: { namespace: string; name: string },
  ): Promise<void> {
    const { resource, namespace, name } = parsed;
    const kind = KIND_OF[resource];
    const calls = this.#options.virtual.calls[resource];
    const referenced = this.#options.enabled[resource] && this.#options.references.isReferenced(key);
    const source = referenced
      ? this.#options.hostUnmanaged[resource]?.get(hostName.namespace, hostName.name)
      : undefined;
    const usable = source && !isManagedBy(source, this.#options.name) ? source : undefined;
    if (!usable) {
      if (virtual) {
        await calls.delete(namespace, name, virtual.metadata?.uid).catch((error) => {
          if (statusCode(error) !== 404 && statusCode(error) !== 409) throw error;
        });
        this.#options.stats.write("virtual", kind, "delete");
      }
      if (referenced && !virtual) {
        throw new ImportError(
          `referenced ${kind} "${namespace}/${name}" exists neither in the virtual cluster nor on the host ` +
            `(as "${hostName.namespace}/${hostName.name}"), so there is nothing to sync or import`,
        );
      }
      return;
    }
    const wanted = importedVirtualObject(usable, kind, { namespace, name }, hostName);
    if (virtual && stableJson(importedView(virtual)) === stableJson(importedView(wanted))) return;
    try {
      if (virtual) {
        wanted.metadata = { ...wanted.metadata, resourceVersion: virtual.metadata?.resourceVersion };
        await calls.replace(namespace, name, wanted);
        this.#options.stats.write("virtual", kind, "update");
      } else {
        await calls.create(namespace, wanted);
        this.#options.stats.write("virtual", kind, "create");
      }
    } catch (error) {
      const code = statusCode(error);
      if (code === 409) throw new RetryError(`virtual ${kind} "${namespace}/${name}" changed meanwhile`);
      const detail = resource === "secrets" ? `HTTP ${code ?? "error"}` : describeError(error);
      throw new ImportError(
        `cannot import host ${kind} "${hostName.namespace}/${hostName.name}" as "${namespace}/${name}": ${detail}`,
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
