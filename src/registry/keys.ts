// Storage keys: `/<group>/<plural>/<namespace>/<name>`; the core group is `core`, the namespace is empty for
// cluster-scoped resources (so a cluster-scoped key has an empty segment: `/management.platform.sh/users//alice`).

import type { ResourceDefinition } from "./types.ts";

export function groupSegment(group: string): string {
  return group === "" ? "core" : group;
}

/** Prefix of every key of a resource, or of one namespace of it. */
export function resourcePrefix(definition: ResourceDefinition, namespace?: string): string {
  const base = `/${groupSegment(definition.group)}/${definition.plural}/`;
  if (!definition.namespaced) return `${base}/`;
  return namespace ? `${base}${namespace}/` : base;
}

export function objectKey(definition: ResourceDefinition, namespace: string | undefined, name: string): string {
  return `/${groupSegment(definition.group)}/${definition.plural}/${definition.namespaced ? (namespace ?? "") : ""}/${name}`;
}

/** Splits a key back into its parts (used by the garbage collector, which watches every key). */
export function parseKey(key: string): { group: string; plural: string; namespace: string; name: string } | undefined {
  const parts = key.split("/");
  if (parts.length !== 5 || parts[0] !== "") return undefined;
  const [, group, plural, namespace, name] = parts;
  return { group: group === "core" ? "" : group, plural, namespace, name };
}
