// Every synced kind, in the order their informers start. Adding a kind is one declaration here.

import { configMapsKind } from "./kind-config-maps.ts";
import { endpointSlicesKind } from "./kind-endpoint-slices.ts";
import { endpointsKind } from "./kind-endpoints.ts";
import { secretsKind } from "./kind-secrets.ts";
import { servicesKind } from "./kind-services.ts";
import type { SyncedKind } from "./synced-kind.ts";
import type { SyncedResource } from "./types.ts";

export const SYNCED_KINDS: readonly SyncedKind[] = [
  servicesKind,
  endpointsKind,
  endpointSlicesKind,
  configMapsKind,
  secretsKind,
];

const BY_RESOURCE = new Map(SYNCED_KINDS.map((kind) => [kind.resource, kind]));

export function kindOf(resource: SyncedResource): SyncedKind {
  const kind = BY_RESOURCE.get(resource);
  if (!kind) throw new Error(`not a synced resource: ${resource}`);
  return kind;
}

/** The synced kind a reference patch's apiVersion and kind name, if it names one that references can sync. */
export function referencedKind(apiVersion: string, kind: string): SyncedKind | undefined {
  return SYNCED_KINDS.find(
    (candidate) =>
      candidate.referenceable && candidate.kind === kind && (apiVersion === candidate.apiVersion || apiVersion === ""),
  );
}
