// defineResource(): a resource is one declaration. Its hooks and columns are typed by the kind's own object type,
// derived from its schema, and the result is the plain ResourceDefinition every registry, server and test takes.

import type { KindOf, KindSchema } from "../apimachinery/schema-builders.ts";
import type { ResourceDefinition } from "./types.ts";

/** A declaration whose hooks, columns and selectable fields take the object type its `schema` describes. */
export type KindDeclaration<S extends KindSchema> = Omit<ResourceDefinition<KindOf<S>>, "schema"> & { schema: S };

/**
 * Declares a resource typed by the object its schema describes (`KindOf<typeof schema>`, built with
 * src/apimachinery/schema-builders.ts) and returns it as a ResourceDefinition.
 */
export function defineResource<S extends KindSchema>(declaration: KindDeclaration<S>): ResourceDefinition;
/**
 * The one cast lives here: hooks take a `T` (their parameters make ResourceDefinition<T> invariant in T), and the
 * generic store only ever hands a strategy the objects of its own kind, decoded and checked against its schema.
 */
export function defineResource(declaration: object): ResourceDefinition {
  return declaration as ResourceDefinition;
}
