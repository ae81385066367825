// The verbs a resource serves, shared by discovery and OpenAPI so both always agree.

import type { ResourceDefinition, Verb } from "../registry/types.ts";

const DEFAULT_VERBS: readonly Verb[] = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

/** Sorted, deduplicated verbs: `definition.verbs`, else the action's verbs, else every standard verb. */
export function resourceVerbs(definition: ResourceDefinition): string[] {
  const verbs: readonly string[] = definition.verbs ?? definition.action?.verbs ?? DEFAULT_VERBS;
  return [...new Set(verbs)].sort();
}
