// Writes to the virtual cluster that bring back what the host decided or changed: a kind's `fromHost` change (an
// update, a status update, or a recreate for fields that cannot change in place) and carried-back values.

import type { CarriedBack } from "./carry-back.ts";
import type { JsonPatchOperation, ResourceCalls } from "./resource-calls.ts";
import type { StatsCounter } from "./stats.ts";
import type { SyncedKind, VirtualChange } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

/** Metadata the server sets: dropped from a body written back. */
const SERVER_METADATA = ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"] as const;

/**
 * Writes a `fromHost` change. A recreate deletes the virtual object (uid precondition) and creates it changed; if the
 * virtual cluster refuses the changed one, the object is put back as it was and the refusal is thrown.
 */
export async function writeVirtualChange(
  side: ResourceCalls,
  kind: SyncedKind,
  change: VirtualChange,
  virtual: WireObject,
  stats: StatsCounter,
): Promise<void> {
  const { namespace = "", name = "", uid } = virtual.metadata ?? {};
  if (change.verb === "update") {
    await side.replace(namespace, name, change.object);
    stats.write("virtual", kind.kind, "update");
    return;
  }
  if (change.verb === "status") {
    await side.replaceStatus(namespace, name, change.object);
    stats.write("virtual", kind.kind, "status");
    return;
  }
  await side.delete(namespace, name, uid);
  stats.write("virtual", kind.kind, "delete");
  try {
    await side.create(namespace, change.object);
    stats.write("virtual", kind.kind, "create");
  } catch (error) {
    // Put the object back as it was (what it held is free again), then report why the change cannot be shown.
    const metadata = { ...virtual.metadata };
    for (const field of SERVER_METADATA) delete metadata[field];
    const { status: _status, ...original } = virtual;
    await side.create(namespace, { ...original, apiVersion: kind.apiVersion, kind: kind.kind, metadata });
    stats.write("virtual", kind.kind, "create");
    throw error;
  }
}

/** JSON patch operations that write carried-back values into the virtual object (places it lacks are skipped). */
export function backOperations(virtual: WireObject, back: CarriedBack): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  if (back.labels) operations.push({ op: "add", path: "/metadata/labels", value: back.labels });
  if (back.annotations) operations.push({ op: "add", path: "/metadata/annotations", value: back.annotations });
  for (const { keys, value } of back.fields) {
    const pointer = keys.map((key) => `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
    const parent = keys
      .slice(0, -1)
      .reduce<unknown>(
        (node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined),
        virtual,
      );
    if (typeof parent !== "object" || parent === null) continue;
    const last = keys[keys.length - 1];
    const exists = Array.isArray(parent) ? Number(last) < parent.length : Object.hasOwn(parent, last);
    if (value === undefined) {
      if (exists) operations.push({ op: "remove", path: pointer });
    } else if (exists) operations.push({ op: "replace", path: pointer, value });
    else if (!Array.isArray(parent)) operations.push({ op: "add", path: pointer, value });
  }
  return operations;
}
