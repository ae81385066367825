// defineResource(): a resource is one declaration. Its hooks and columns are typed by the kind's own object type,
// and the result is the plain ResourceDefinition every registry, server and test takes.

import type { KubeObject } from "../apimachinery/types.ts";
import type { ResourceDefinition } from "./types.ts";

/**
 * Declares a resource typed by its object `T` and returns it as a ResourceDefinition.
 * The one cast lives here: hooks take a `T` (their parameters make ResourceDefinition<T> invariant in T), and the
 * generic store only ever hands a strategy the objects of its own kind, decoded and checked against its schema.
 */
export function defineResource<T extends KubeObject>(declaration: ResourceDefinition<T>): ResourceDefinition {
  return declaration as unknown as ResourceDefinition;
}
