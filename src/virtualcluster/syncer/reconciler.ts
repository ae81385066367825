import { isDeepStrictEqual } from "node:util";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";
import { desiredHostObject, hostObjectForVirtual, type SyncContext } from "./desired-state.ts";
import { HostWriteError, RetryError, UnmanagedObjectError } from "./errors.ts";
import { hasSelector } from "./host-service.ts";
import type { Informer } from "./informer.ts";
import { currentHost, type KeyState } from "./key-state.ts";
import { formatKey, isOrphan, parseKey, type SyncKey } from "./keys.ts";
import { describeError, statusCode, statusReason } from "./kube-client.ts";
import type { ReferenceTracker } from "./reference-tracker.ts";
import type { JsonPatchOperation, ResourceCalls } from "./resource-calls.ts";
import { reverseMetadata, snapshotOf } from "./reverse-metadata.ts";
import { semanticallyEqual, updateBody } from "./semantic-equal.ts";
import { stableJson } from "./stable-json.ts";
import type { StatsCounter } from "./stats.ts";
import { KIND_OF, type SyncedResource, type WireObject } from "./types.ts";

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

/**
 * Brings one key's host object to the state its virtual object asks for. Only host objects carrying this virtual
 * cluster's managed-by label are ever updated or deleted. Nothing is written when the host object is already in
 * its desired state.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #states = new Map<string, KeyState>();

  constructor(options: ReconcilerOptions) {
    this.#options = options;
  }

  /** The host informer saw an event for `key`: drop our write overlay once the informer has caught up. */
  hostEvent(key: string, caughtUp: (state: NonNullable<KeyState["written"]>) => boolean): void {
    const state = this.#states.get(key);
    if (!state?.written || !caughtUp(state.written)) return;
    delete state.written;
    if (!state.last && !state.applied) this.#states.delete(key); // a deleted object: nothing left to remember
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

  /** Computes the Secrets an Endpoints object references, without writing anything (start-up priming). */
  primeReferences(key: string): void {
    const parsed = parseKey(key);
    const virtual = this.virtualObject(parsed);
    if (!virtual || parsed.resource !== "endpoints" || !this.#wanted(parsed, virtual)) return;
    try {
      const { references } = desiredHostObject("endpoints", virtual, undefined, this.#options.context);
      this.#trackReferences(key, references, false);
    } catch {
      // Reported when the object itself syncs.
    }
  }

  async reconcile(key: string): Promise<void> {
    const parsed = parseKey(key);
    const { resource } = parsed;
    const { host, hostNamespace, context } = this.#options;
    const hostName = isOrphan(parsed) ? parsed.name : context.translator.hostName(parsed.name, parsed.namespace);
    const state = this.#states.get(key) ?? {};
    const cached = host.informers[resource]?.get(hostNamespace, hostName);
    const current = currentHost(cached, state);
    const hostObject = isManagedBy(current, this.#options.name) ? current : undefined;
    const virtual = isOrphan(parsed) ? undefined : this.virtualObject(parsed);

    if (!virtual || !this.#wanted(parsed, virtual)) {
      if (resource === "endpoints") this.#trackReferences(key, [], true);
      if (hostObject) await this.#delete(key, resource, hostObject, state);
      if (!state.written) this.#states.delete(key);
      return;
    }
    this.#states.set(key, state);
    let source = virtual;
    if (hostObject && state.last) source = await this.#carryBack(resource, source, hostObject, state);
    const desired = desiredHostObject(resource, source, hostObject, context);
    if (resource === "endpoints") this.#trackReferences(key, desired.references, true);
    const desiredText = stableJson(desired.object);
    let result: WireObject | undefined = hostObject;
    if (!hostObject) {
      result = await this.#create(key, resource, desired.object, state);
    } else if (!this.#inSync(resource, desired.object, desiredText, hostObject, state)) {
      result = await this.#update(key, resource, desired.object, hostObject, state);
    }
    if (result !== hostObject) {
      state.applied = { desired: desiredText, resourceVersion: result?.metadata?.resourceVersion ?? "" };
    }
    state.last = { virtual: snapshotOf(source), host: snapshotOf(result) };
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
      case "secrets":
        return this.#options.references.isReferenced(formatKey("secrets", key.namespace, key.name));
    }
  }

  #inSync(
    resource: SyncedResource,
    desired: WireObject,
    desiredText: string,
    host: WireObject,
    state: KeyState,
  ): boolean {
    const applied = state.applied;
    const unchanged = applied?.resourceVersion === host.metadata?.resourceVersion && applied?.desired === desiredText;
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
    if (isDeepStrictEqual(snapshotOf(host), state.last?.host)) return virtual;
    const reversed = hostObjectForVirtual(resource, host, virtual, context);
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
    const { hostNamespace, host, name } = this.#options;
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
    const { hostNamespace, host } = this.#options;
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
    const { hostNamespace, host } = this.#options;
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

  /** Records which Secrets an Endpoints object references; Secrets that gained or lost a reference re-sync. */
  #trackReferences(
    key: string,
    references: { apiVersion: string; kind: string; source: { name: string; namespace: string } }[],
    enqueue: boolean,
  ): void {
    const targets = references
      .filter(
        (reference) => reference.kind === "Secret" && (reference.apiVersion === "v1" || reference.apiVersion === ""),
      )
      .map((reference) => formatKey("secrets", reference.source.namespace, reference.source.name));
    const changed = this.#options.references.set(key, targets);
    if (enqueue) for (const target of changed) this.#options.enqueue(target);
  }
}
