import { applyPatches } from "../patches/apply.ts";
import type { CompiledPatchSet } from "../patches/compile.ts";
import type { ReferencedObject, VirtualClusterInfo } from "../patches/types.ts";
import { translateEndpoints } from "./host-endpoints.ts";
import type { HostObjectOptions } from "./host-metadata.ts";
import { translateSecret } from "./host-secret.ts";
import { translateService } from "./host-service.ts";
import type { SyncedResource, WireObject } from "./types.ts";

export interface SyncContext extends HostObjectOptions {
  /** `context.vcluster` of patch expressions. */
  vcluster: VirtualClusterInfo;
  /** The patch list of each resource that has one (`sync.toHost.<resource>.patches`). */
  patches: Partial<Record<SyncedResource, CompiledPatchSet>>;
}

export interface DesiredHostObject {
  object: WireObject;
  /** Objects the reference patches pointed at: they sync too. */
  references: ReferencedObject[];
}

const TRANSLATE: Record<SyncedResource, (virtual: WireObject, options: HostObjectOptions) => WireObject> = {
  services: translateService,
  endpoints: translateEndpoints,
  secrets: translateSecret,
};

/**
 * The host object a virtual object should have: translated, then the resource's patches applied toward the host
 * (`expression`, labels and reference patches). `host` is the current host object (`context.hostObject`), if any.
 * Throws PatchApplyError naming the failing patch.
 */
export function desiredHostObject(
  resource: SyncedResource,
  virtual: WireObject,
  host: WireObject | undefined,
  context: SyncContext,
): DesiredHostObject {
  const translated = TRANSLATE[resource](virtual, context);
  const patches = context.patches[resource];
  if (!patches || patches.patches.length === 0) return { object: translated, references: [] };
  const result = applyPatches(patches, translated, {
    direction: "toHost",
    context: { vcluster: context.vcluster, hostObject: host ?? null, virtualObject: virtual },
    translator: context.translator,
    namespace: virtual.metadata?.namespace,
  });
  return { object: result.object as WireObject, references: result.references };
}

/**
 * The host object as the virtual side should see it: the resource's patches applied toward the virtual cluster
 * (`reverseExpression`, labels and reference patches). Used to bring host-side label and annotation changes back.
 */
export function hostObjectForVirtual(
  resource: SyncedResource,
  host: WireObject,
  virtual: WireObject,
  context: SyncContext,
): WireObject {
  const patches = context.patches[resource];
  if (!patches || patches.patches.length === 0) return host;
  const result = applyPatches(patches, host, {
    direction: "toVirtual",
    context: { vcluster: context.vcluster, hostObject: host, virtualObject: virtual },
    translator: context.translator,
    namespace: virtual.metadata?.namespace,
  });
  return result.object as WireObject;
}
