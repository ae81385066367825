// The one function that turns a virtual object into its host object: used by the syncer and by
// `virtualcluster patches apply`, so the preview is the live sync.
//
//   translate (the kind's declaration: names, spec, labels, annotations) -> patches toward the host -> the syncer's
//   marks
//
// The marks (marker labels, object-* annotations, managed-annotations, owner reference) come last: no patch can
// read or change them.

import { applyPatches } from "../patches/apply.ts";
import type { CompiledPatchSet } from "../patches/compile.ts";
import type { ReferencedObject, VirtualClusterInfo } from "../patches/types.ts";
import { type HostObjectOptions, withSyncerMarks } from "./host-metadata.ts";
import { gvkString } from "./synced-kind.ts";
import { kindOf } from "./synced-kinds.ts";
import type { SyncedResource, WireObject } from "./types.ts";

export interface SyncContext extends HostObjectOptions {
  /** `context.vcluster` of patch expressions. */
  vcluster: VirtualClusterInfo;
  /** The patch list of each resource that has one (`sync.toHost.<kind>.patches`). */
  patches: Partial<Record<SyncedResource, CompiledPatchSet>>;
}

export interface DesiredHostObject {
  object: WireObject;
  /** Objects the reference patches pointed at: they sync too. */
  references: ReferencedObject[];
}

/**
 * The host object a virtual object should have: translated, then the resource's patches applied toward the host
 * (`expression`, labels and reference patches), then the syncer's marks. `host` is the current host object
 * (`context.hostObject`), if any. Throws PatchApplyError naming the failing patch.
 */
export function desiredHostObject(
  resource: SyncedResource,
  virtual: WireObject,
  host: WireObject | undefined,
  context: SyncContext,
): DesiredHostObject {
  const kind = kindOf(resource);
  const translated = kind.translate(virtual, context);
  const patches = context.patches[resource];
  let patched = translated;
  let references: ReferencedObject[] = [];
  if (patches && patches.patches.length > 0) {
    const result = applyPatches(patches, translated, {
      direction: "toHost",
      context: { vcluster: context.vcluster, hostObject: host ?? null, virtualObject: virtual },
      translator: context.translator,
      namespace: virtual.metadata?.namespace,
    });
    patched = result.object as WireObject;
    references = result.references;
  }
  return { object: withSyncerMarks(patched, virtual, gvkString(kind), context), references };
}

/**
 * The host object as the virtual side should see it: the resource's patches applied toward the virtual cluster
 * (`reverseExpression`, labels and reference patches). Used to bring host-side changes back.
 * `virtual` is the virtual object when known; `virtualNamespace` defaults to its namespace.
 */
export function hostObjectForVirtual(
  resource: SyncedResource,
  host: WireObject,
  virtual: WireObject | undefined,
  context: SyncContext,
  virtualNamespace = virtual?.metadata?.namespace,
): DesiredHostObject {
  const patches = context.patches[resource];
  if (!patches || patches.patches.length === 0) return { object: host, references: [] };
  const result = applyPatches(patches, host, {
    direction: "toVirtual",
    context: { vcluster: context.vcluster, hostObject: host, virtualObject: virtual ?? null },
    translator: context.translator,
    namespace: virtualNamespace,
  });
  return { object: result.object as WireObject, references: result.references };
}
