// The EndpointSlice mirroring controller, as Kubernetes' (pkg/controller/endpointslicemirroring) runs it: the
// Endpoints of a selector-less Service are mirrored into EndpointSlices, so a client that reads only slices (kube-proxy,
// CoreDNS, current clients) sees the endpoints a client of Endpoints sees.
//  - not mirrored: Endpoints without a Service, of a Service with a selector, labelled
//    `endpointslice.kubernetes.io/skip-mirror: "true"`, with the leader-election annotation, or being deleted;
//  - one slice per distinct set of ports and address family; at most 1000 addresses of each subset are mirrored (the
//    rest are skipped with a TooManyAddressesToMirror Warning event on the Endpoints);
//  - a slice carries the Endpoints' labels and annotations (not the last-change-trigger-time and last-applied ones),
//    `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by`, and is owned by the Endpoints (so the
//    garbage collector deletes it with them); named `<endpoints>-<random>`.
// Slices are written only when they differ from what they should be; slices of other managers are never touched.

import { randomBytes } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import type { Logger } from "pino";
import { isStatusError } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import {
  DISCOVERY_GROUP,
  MANAGED_BY_LABEL,
  MAX_ENDPOINTS,
  SERVICE_NAME_LABEL,
  type SliceEndpoint,
  type SlicePort,
} from "../apis/discovery/v1/endpointslice.ts";
import type { InformerHandler } from "../auth/store-informer.ts";
import type { Registry } from "../registry/registry.ts";
import type { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import type { StoredRecord, WatchEvent } from "../storage/types.ts";
import { stableJson } from "../utils/stable-json.ts";

export const MIRRORING_CONTROLLER = "endpointslicemirroring-controller.k8s.io";
const SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror";
const LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";
const NOT_COPIED_ANNOTATIONS = new Set([
  "endpoints.kubernetes.io/last-change-trigger-time",
  "kubectl.kubernetes.io/last-applied-configuration",
]);
/** --mirroring-max-endpoints-per-subset of kube-controller-manager (its default). */
const MAX_PER_SUBSET = MAX_ENDPOINTS;
const MANAGER = "endpointslicemirroring-controller";
const SERVICES = "/core/services/";
const ENDPOINTS = "/core/endpoints/";
const SLICES = `/${DISCOVERY_GROUP}/endpointslices/`;
const RETRY_MS = 500;

interface Address {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: Record<string, unknown>;
}
interface Subset {
  addresses?: Address[];
  notReadyAddresses?: Address[];
  ports?: { name?: string; port: number; protocol?: string; appProtocol?: string }[];
}
interface Endpoints extends KubeObject {
  subsets?: Subset[];
}

/** A mirrored slice as the controller remembers it: enough to decide without reading it again. */
interface KnownSlice {
  name: string;
  revision: number;
  /** Address family and ports: the group a slice stands for. */
  group: string;
  /** Canonical text of everything the controller writes, to compare with what it should be. */
  content: string;
}

interface DesiredSlice {
  group: string;
  addressType: "IPv4" | "IPv6";
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

/** `<namespace>/<name>` of a key `/core/<plural>/<namespace>/<name>` or `/<group>/<plural>/<namespace>/<name>`. */
function nameOfKey(key: string, prefix: string): string {
  return key.slice(prefix.length);
}

const hasSelector = (service: KubeObject): boolean => {
  const selector = (service.spec as { selector?: Record<string, string> } | undefined)?.selector;
  return selector !== undefined && selector !== null && Object.keys(selector).length > 0;
};

/** The ports of an Endpoints subset as slice ports (protocol defaulted as the API does). */
const slicePorts = (subset: Subset): SlicePort[] =>
  (subset.ports ?? []).map((port) => ({
    name: port.name ?? "",
    port: port.port,
    protocol: port.protocol ?? "TCP",
    ...(port.appProtocol !== undefined ? { appProtocol: port.appProtocol } : {}),
  }));

function endpointOf(address: Address, ready: boolean): SliceEndpoint {
  const endpoint: SliceEndpoint = { addresses: [address.ip], conditions: { ready } };
  if (address.hostname) endpoint.hostname = address.hostname;
  if (address.nodeName) endpoint.nodeName = address.nodeName;
  if (address.targetRef) endpoint.targetRef = { ...address.targetRef };
  return endpoint;
}

/** The slices an Endpoints object should have, and how many addresses the per-subset limit left out. */
export function desiredSlices(endpoints: Endpoints): { slices: DesiredSlice[]; skipped: number } {
  const groups = new Map<string, DesiredSlice & { seen: Set<string> }>();
  let skipped = 0;
  for (const subset of endpoints.subsets ?? []) {
    const ports = slicePorts(subset);
    const all = [
      ...(subset.addresses ?? []).map((address) => ({ address, ready: true })),
      ...(subset.notReadyAddresses ?? []).map((address) => ({ address, ready: false })),
    ];
    let added = 0;
    for (const { address, ready } of all) {
      if (added >= MAX_PER_SUBSET) break;
      const addressType = isIPv4(address.ip) ? "IPv4" : isIPv6(address.ip) ? "IPv6" : undefined;
      if (!addressType) continue;
      added++;
      const group = `${addressType}/${JSON.stringify(ports)}`;
      let slice = groups.get(group);
      if (!slice) {
        slice = { group, addressType, ports, endpoints: [], seen: new Set() };
        groups.set(group, slice);
      }
      // The same address twice (in two subsets with the same ports): once, ready if either says so.
      if (slice.seen.has(address.ip)) continue;
      slice.seen.add(address.ip);
      if (slice.endpoints.length < MAX_ENDPOINTS) slice.endpoints.push(endpointOf(address, ready));
    }
    skipped += all.length - added;
  }
  return { slices: [...groups.values()].map(({ seen: _seen, ...slice }) => slice), skipped };
}

/** Metadata every mirrored slice of `endpoints` carries. */
function sliceMetadata(endpoints: Endpoints): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels: Record<string, string> = { ...endpoints.metadata.labels };
  labels[SERVICE_NAME_LABEL] = endpoints.metadata.name ?? "";
  labels[MANAGED_BY_LABEL] = MIRRORING_CONTROLLER;
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(endpoints.metadata.annotations ?? {})) {
    if (!NOT_COPIED_ANNOTATIONS.has(key)) annotations[key] = value;
  }
  return { labels, annotations };
}

/** The canonical text of what a mirrored slice holds, for comparing what is with what should be. */
const contentOf = (slice: {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: unknown[] };
  addressType?: unknown;
  ports?: unknown;
  endpoints?: unknown;
}): string =>
  stableJson([
    slice.metadata.labels ?? {},
    slice.metadata.annotations ?? {},
    slice.metadata.ownerReferences ?? [],
    slice.addressType,
    slice.ports ?? [],
    slice.endpoints ?? [],
  ]);

export interface EndpointSliceMirroringOptions {
  registry: Registry;
  logger?: Logger;
}

export class EndpointSliceMirroring implements InformerHandler {
  readonly prefixes = [SERVICES, ENDPOINTS, SLICES];
  readonly #options: EndpointSliceMirroringOptions;
  /** `<namespace>/<name>` of every Service: whether it has a selector. */
  readonly #services = new Map<string, boolean>();
  /** Mirrored slices by `<namespace>/<endpoints name>`. */
  readonly #slices = new Map<string, Map<string, KnownSlice>>();
  /** Slice key -> the `<namespace>/<endpoints name>` it was indexed under. */
  readonly #sliceOwners = new Map<string, string>();
  /** The last TooManyAddressesToMirror warning per Endpoints (uid and count), so a repeat is not recorded again. */
  readonly #warned = new Map<string, string>();
  /** Endpoints to reconcile, with their record when an event brought it (else it is read from storage). */
  readonly #pending = new Map<string, StoredRecord | undefined>();
  /**
   * Endpoints whose slice is being written, with the revisions of their slices' events seen meanwhile: the echo of a
   * create comes before the write returns (its name is the server's), so the write decides once it knows its revision.
   */
  readonly #writing = new Map<string, number[]>();
  #draining: Promise<void> | undefined;
  #started = false;
  #stopped = false;

  constructor(options: EndpointSliceMirroringOptions) {
    this.#options = options;
  }

  reset(records: StoredRecord[]): void {
    this.#services.clear();
    this.#slices.clear();
    this.#sliceOwners.clear();
    for (const record of records) this.#observe(record, false);
    // Every Endpoints object is looked at once: slices made while this server was down, or by an older version.
    for (const record of records) if (record.key.startsWith(ENDPOINTS)) this.#enqueue(nameOfKey(record.key, ENDPOINTS));
  }

  apply(event: WatchEvent): void {
    const { record } = event;
    if (event.type === "delete") this.#forget(record);
    else this.#observe(record, true);
  }

  /** Starts writing (after the server's stores are registered); events before are remembered. */
  start(): void {
    this.#started = true;
    this.#drain();
  }

  stop(): void {
    this.#stopped = true;
  }

  /** The registry's decode of a record, shared with every other in-process watcher (never modified here). */
  #decode(group: string, plural: string, record: StoredRecord): KubeObject {
    const store = this.#options.registry.genericStore(group, plural);
    return store ? store.decodeShared(record) : (JSON.parse(record.value) as KubeObject);
  }

  #observe(record: StoredRecord, live: boolean): void {
    const { key } = record;
    if (key.startsWith(SERVICES)) {
      const name = nameOfKey(key, SERVICES);
      this.#services.set(name, hasSelector(this.#decode("", "services", record)));
      if (live) this.#enqueue(name);
    } else if (key.startsWith(ENDPOINTS)) {
      if (live) this.#enqueue(nameOfKey(key, ENDPOINTS), record);
    } else if (key.startsWith(SLICES)) {
      this.#observeSlice(record, live);
    }
  }

  #observeSlice(record: StoredRecord, live: boolean): void {
    const indexed = this.#sliceOwners.get(record.key);
    const slices = indexed ? this.#slices.get(indexed) : undefined;
    const name = record.key.slice(record.key.lastIndexOf("/") + 1);
    // The echo of our own write: already known at this revision.
    if (slices?.get(name)?.revision === record.revision) return;
    const slice = this.#decode(DISCOVERY_GROUP, "endpointslices", record) as KubeObject & {
      addressType?: string;
      ports?: SlicePort[];
    };
    const labels = slice.metadata.labels ?? {};
    const owner = `${slice.metadata.namespace}/${labels[SERVICE_NAME_LABEL] ?? ""}`;
    if (indexed && indexed !== owner) this.#forget(record);
    if (labels[MANAGED_BY_LABEL] !== MIRRORING_CONTROLLER) {
      if (indexed) this.#forget(record);
      return;
    }
    this.#remember(owner, record.key, {
      name,
      revision: record.revision,
      group: `${slice.addressType}/${JSON.stringify(slice.ports ?? [])}`,
      content: contentOf(slice),
    });
    // Someone changed or deleted a slice of ours: its Endpoints decide again (after a write in flight, see #write).
    if (!live) return;
    const seen = this.#writing.get(owner);
    if (seen) seen.push(record.revision);
    else this.#enqueue(owner);
  }

  #remember(owner: string, key: string, slice: KnownSlice): void {
    let slices = this.#slices.get(owner);
    if (!slices) {
      slices = new Map();
      this.#slices.set(owner, slices);
    }
    slices.set(slice.name, slice);
    this.#sliceOwners.set(key, owner);
  }

  #forget(record: StoredRecord): void {
    const { key } = record;
    if (key.startsWith(SERVICES)) {
      const name = nameOfKey(key, SERVICES);
      this.#services.delete(name);
      this.#enqueue(name);
      return;
    }
    if (key.startsWith(ENDPOINTS)) {
      this.#enqueue(nameOfKey(key, ENDPOINTS));
      return;
    }
    const owner = this.#sliceOwners.get(key);
    if (!owner) return;
    this.#sliceOwners.delete(key);
    const slices = this.#slices.get(owner);
    slices?.delete(key.slice(key.lastIndexOf("/") + 1));
    if (slices?.size === 0) this.#slices.delete(owner);
    this.#enqueue(owner);
  }

  #enqueue(name: string, record?: StoredRecord): void {
    if (this.#stopped) return;
    this.#pending.set(name, record ?? this.#pending.get(name));
    this.#drain();
  }

  #drain(): void {
    if (this.#draining || !this.#started) return;
    this.#draining = (async () => {
      while (this.#pending.size > 0 && !this.#stopped) {
        const [name, record] = this.#pending.entries().next().value as [string, StoredRecord | undefined];
        this.#pending.delete(name);
        try {
          await this.#reconcile(name, record);
        } catch (error) {
          if (!this.#stopped) this.#retry(name, error);
        }
      }
    })().finally(() => {
      this.#draining = undefined;
    });
  }

  #retry(name: string, error: unknown): void {
    // A conflict means someone wrote meanwhile: the event of that write re-queues it too.
    if (!(isStatusError(error) && (error.code === 409 || error.code === 404))) {
      this.#options.logger?.warn(
        { endpoints: name, err: String(error) },
        "mirroring Endpoints to EndpointSlices failed",
      );
    }
    setTimeout(() => this.#enqueue(name), RETRY_MS).unref();
  }

  async #endpoints(name: string, record: StoredRecord | undefined): Promise<Endpoints | undefined> {
    const current = record ?? (await this.#options.registry.storage.get(`${ENDPOINTS}${name}`));
    return current ? (this.#decode("", "endpoints", current) as Endpoints) : undefined;
  }

  /** Whether `endpoints` is mirrored at all. */
  #mirrored(name: string, endpoints: Endpoints | undefined): endpoints is Endpoints {
    if (!endpoints || endpoints.metadata.deletionTimestamp) return false;
    const selector = this.#services.get(name);
    if (selector === undefined || selector) return false;
    if (endpoints.metadata.labels?.[SKIP_MIRROR_LABEL] === "true") return false;
    return endpoints.metadata.annotations?.[LEADER_ANNOTATION] === undefined;
  }

  async #reconcile(name: string, record: StoredRecord | undefined): Promise<void> {
    const found = await this.#endpoints(name, record);
    const existing = [...(this.#slices.get(name)?.values() ?? [])];
    const endpoints = this.#mirrored(name, found) ? found : undefined;
    const { slices, skipped } = endpoints ? desiredSlices(endpoints) : { slices: [], skipped: 0 };
    const kept = new Set<string>();
    for (const desired of slices) {
      const body = endpoints && this.#sliceBody(endpoints, desired);
      if (!body) continue;
      const current = existing.find((slice) => slice.group === desired.group && !kept.has(slice.name));
      if (current) kept.add(current.name);
      if (current?.content === contentOf(body)) continue;
      await this.#write(name, body, current);
    }
    for (const slice of existing) if (!kept.has(slice.name)) await this.#delete(name, slice);
    const warning = endpoints && skipped > 0 ? `${endpoints.metadata.uid}/${skipped}` : undefined;
    if (warning === undefined) this.#warned.delete(name);
    else if (this.#warned.get(name) !== warning) {
      this.#warned.set(name, warning);
      await this.#warnTooMany(endpoints!, skipped);
    }
  }

  #sliceBody(endpoints: Endpoints, desired: DesiredSlice): KubeObject {
    const { labels, annotations } = sliceMetadata(endpoints);
    const owner = {
      apiVersion: "v1",
      kind: "Endpoints",
      name: endpoints.metadata.name ?? "",
      uid: endpoints.metadata.uid ?? "",
      controller: true,
      blockOwnerDeletion: true,
    };
    return {
      apiVersion: `${DISCOVERY_GROUP}/v1`,
      kind: "EndpointSlice",
      metadata: { namespace: endpoints.metadata.namespace, labels, annotations, ownerReferences: [owner] },
      addressType: desired.addressType,
      ports: desired.ports,
      endpoints: desired.endpoints,
    };
  }

  async #write(owner: string, body: KubeObject, current: KnownSlice | undefined): Promise<void> {
    const store = this.#options.registry.genericStore(DISCOVERY_GROUP, "endpointslices");
    if (!store) return;
    const seen: number[] = [];
    this.#writing.set(owner, seen);
    let written: KubeObject;
    try {
      written = await this.#send(store, owner, body, current);
    } catch (error) {
      if (seen.length > 0) this.#enqueue(owner);
      throw error;
    } finally {
      this.#writing.delete(owner);
    }
    const name = written.metadata.name ?? "";
    const revision = Number(written.metadata.resourceVersion);
    this.#remember(owner, `${SLICES}${body.metadata.namespace ?? ""}/${name}`, {
      name,
      revision,
      group: `${body.addressType}/${JSON.stringify(body.ports)}`,
      content: contentOf(body),
    });
    // Anything but this write's own echo changed the owner's slices meanwhile: decide again.
    if (seen.some((seenRevision) => seenRevision !== revision)) this.#enqueue(owner);
  }

  /** Updates the slice we know, or creates one named after the Endpoints. */
  #send(store: GenericStore, owner: string, body: KubeObject, current: KnownSlice | undefined): Promise<KubeObject> {
    const context = systemContext(`system:serviceaccount:kube-system:${MANAGER}`, MANAGER);
    const namespace = body.metadata.namespace ?? "";
    if (current) {
      const metadata = { ...body.metadata, name: current.name, resourceVersion: String(current.revision) };
      return store.update(context, { namespace, name: current.name }, { ...body, metadata }, { fieldManager: MANAGER });
    }
    const metadata = { ...body.metadata, generateName: `${owner.slice(owner.indexOf("/") + 1)}-` };
    return store.create(context, namespace, { ...body, metadata }, { fieldManager: MANAGER });
  }

  async #delete(owner: string, slice: KnownSlice): Promise<void> {
    const store = this.#options.registry.genericStore(DISCOVERY_GROUP, "endpointslices");
    if (!store) return;
    const namespace = owner.slice(0, owner.indexOf("/"));
    const context = systemContext(`system:serviceaccount:kube-system:${MANAGER}`, MANAGER);
    try {
      await store.delete(context, { namespace, name: slice.name }, {});
    } catch (error) {
      if (!(isStatusError(error) && error.code === 404)) throw error;
    }
  }

  /** A Warning event on the Endpoints, as the upstream controller records it (best effort). */
  async #warnTooMany(endpoints: Endpoints, skipped: number): Promise<void> {
    const store = this.#options.registry.genericStore("", "events");
    if (!store) return;
    const { namespace = "", name = "", uid } = endpoints.metadata;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const context = systemContext(`system:serviceaccount:kube-system:${MANAGER}`, MANAGER);
    await store
      .create(
        context,
        namespace,
        {
          apiVersion: "v1",
          kind: "Event",
          // Named as the Kubernetes event recorder names events: <object>.<hex time><hex random>.
          metadata: {
            name: `${name.slice(0, 235)}.${Date.now().toString(16)}${randomBytes(4).toString("hex")}`,
            namespace,
          },
          involvedObject: { apiVersion: "v1", kind: "Endpoints", namespace, name, uid },
          reason: "TooManyAddressesToMirror",
          message: `A max of ${MAX_PER_SUBSET} addresses can be mirrored to EndpointSlices per Endpoints subset. ${skipped} addresses were skipped`,
          type: "Warning",
          source: { component: "endpoint-slice-mirroring-controller" },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
        { fieldManager: MANAGER },
      )
      .catch((error) => this.#options.logger?.warn({ err: String(error) }, "cannot record a mirroring event"));
  }
}
