// What makes a kind synced: one declaration per kind (kind-*.ts). The reconciler, the syncer and `patches apply` read
// only these; nothing in them branches on a kind's name.

import type { VirtualClusterSettings } from "../settings/types.ts";
import type { HostObjectOptions } from "./host-metadata.ts";
import type { SyncedResource, WireObject } from "./types.ts";

/** What a kind's sync rules may look at besides the object itself. */
export interface SyncView {
  /** A virtual object of a kind this one follows (`follows`), from the informer cache. */
  virtual(resource: SyncedResource, namespace: string, name: string): WireObject | undefined;
  /** Whether a reference patch of some synced object names this object. */
  referenced(namespace: string, name: string): boolean;
  /** `sync.toHost.<kind>.all`: every object of the kind is synced, referenced or not. */
  all: boolean;
}

/** A change the virtual object needs to show what the host decided (a Service's addresses and status). */
export type VirtualChange =
  /** Fields that cannot change in place (a cluster IP): the virtual object is deleted and created as `object`. */
  | { verb: "recreate"; object: WireObject; what: string }
  /** An update of the virtual object to `object` (node ports). */
  | { verb: "update"; object: WireObject; what: string }
  /** An update of its status subresource to `object` (load balancer status). */
  | { verb: "status"; object: WireObject; what: string };

export interface SyncedKind {
  /** REST plural: informer paths and queue keys. */
  resource: SyncedResource;
  kind: string;
  /** `v1` or `<group>/v1`. */
  apiVersion: string;
  /** The key under `sync.toHost` of its settings (`enabled`, `patches`, for some `all`). */
  settings: "services" | "endpoints" | "endpointSlices" | "configMaps" | "secrets";
  /** Whether the kind syncs at all with these settings (`hasReferences`: some patch list has a reference patch). */
  enabled(toHost: VirtualClusterSettings["sync"]["toHost"], hasReferences: boolean): boolean;
  /** Name translation and content of the host copy before patches (the syncer's marks come after the patches). */
  translate(virtual: WireObject, options: HostObjectOptions): WireObject;
  /** Which virtual objects of an enabled kind have a host copy (objects being deleted never do). */
  wanted(virtual: WireObject, view: SyncView): boolean;
  /** A kind whose object of the same namespace and name decides about this one (Endpoints follow their Service). */
  follows?: SyncedResource;
  /** Extra label selectors of the informers: objects of the kind that are never synced (mirrored EndpointSlices). */
  virtualSelector?: string;
  hostSelector?: string;
  /** The content compared with the host copy, server-set and defaulted values filled in or left out on both sides. */
  content(object: WireObject): unknown;
  /** True when the host copy cannot be updated into the desired object (a Secret's type): deleted and created. */
  replaces?(desired: WireObject, actual: WireObject): boolean;
  /**
   * Bodies to try for a create, in order, the next one after the host refuses (422) the one before: a Service
   * first asks for the virtual Service's cluster IP and node ports. Default: the desired object alone.
   */
  createBodies?(desired: WireObject, virtual: WireObject): WireObject[];
  /** Bodies to try for an update, in order (default: the desired object with the host copy's resourceVersion). */
  updateBodies?(desired: WireObject, actual: WireObject): WireObject[];
  /**
   * What flows back host -> virtual besides labels, annotations and reverse patches: values the host decides that
   * the virtual object shows (a Service's cluster IP, node ports and load balancer status). One change at a time.
   */
  fromHost?(virtual: WireObject, host: WireObject): VirtualChange | undefined;
  /** Who owns the host copy: the virtual cluster's own host Service (single-namespace mode), so the host GC cleans up. */
  owner: "virtual-cluster-service";
  /** Named by reference patches: synced while referenced (or all), imported from the host when only it has one. */
  referenceable: boolean;
  /** Its data may be secret: errors and events carry statuses, never server messages or expression errors. */
  confidential: boolean;
}

/** The object-kind annotation's value: Go's GroupVersionKind.String(), e.g. `/v1, Kind=Endpoints`. */
export function gvkString(kind: SyncedKind): string {
  const slash = kind.apiVersion.lastIndexOf("/");
  const group = slash < 0 ? "" : kind.apiVersion.slice(0, slash);
  const version = kind.apiVersion.slice(slash + 1);
  return `${group}/${version}, Kind=${kind.kind}`;
}

/** The collection path of a kind, in one namespace or (namespace undefined) across all of them. */
export function collectionPath(
  kind: Pick<SyncedKind, "apiVersion" | "resource">,
  namespace: string | undefined,
): string {
  const root = kind.apiVersion.includes("/") ? `/apis/${kind.apiVersion}` : `/api/${kind.apiVersion}`;
  return namespace === undefined
    ? `${root}/${kind.resource}`
    : `${root}/namespaces/${encodeURIComponent(namespace)}/${kind.resource}`;
}
