// Terse builders for the JSON schemas of resource definitions. The schema is the single source of truth for
// validation, pruning, OpenAPI, `kubectl explain` and the TypeScript type of a kind: each builder returns the plain
// JSON schema it always did, typed as a `Schema<T>` whose `T` is what the schema accepts, and `Static<typeof schema>`
// reads that type back. `object()` derives required and optional properties from its `required` list, `string()`
// with an `enum` a union of its values, open objects `Record<string, unknown>`. The type lives only in the type
// checker; the objects are the same bytes as before, so the served OpenAPI does not depend on it.
//
// This module imports nothing at run time: the web console imports kinds' types from schema modules built on it.

import type { JsonMap, KubeObject } from "./types.ts";

declare const staticType: unique symbol;

/** A JSON schema of values of type `T`. The brand exists for the type checker only; at run time it is a JsonMap. */
export type Schema<T = unknown> = JsonMap & { readonly [staticType]: T };

/** The type of the values a schema accepts. */
export type Static<S> = S extends Schema<infer T> ? T : never;

type Properties = Record<string, Schema>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The object type of `properties`: the `required` ones present, the others optional. */
export type ObjectOf<P extends Properties, R extends keyof P = never> = Simplify<
  { [K in keyof P as K extends R ? K : never]: Static<P[K]> } & {
    [K in keyof P as K extends R ? never : K]?: Static<P[K]>;
  }
>;

/** Types a schema written out by hand. The one place a type is asserted, not derived: keep its uses few and plain. */
export const declared = <T>(schema: JsonMap): Schema<T> => schema as Schema<T>;

/** A string; with `enum`, one of those values. */
export const string = <const V extends string = string>(
  description: string,
  extra: JsonMap & { enum?: readonly V[] } = {},
): Schema<V> => declared({ type: "string", description, ...extra });
export const integer = (description: string, extra: JsonMap = {}): Schema<number> =>
  declared({ type: "integer", format: "int64", description, ...extra });
/** A number that may have a fraction (CPU seconds, prices). */
export const number = (description: string, extra: JsonMap = {}): Schema<number> =>
  declared({ type: "number", description, ...extra });
export const boolean = (description: string): Schema<boolean> => declared({ type: "boolean", description });
export const timestamp = (description: string): Schema<string> =>
  declared({ type: "string", format: "date-time", description });

/** A list; atomic unless `listType` says otherwise (managedFields tracks set/map lists per item). */
export const array = <T>(
  items: Schema<T>,
  description: string,
  listType?: { type: "set" } | { type: "map"; keys: string[] },
): Schema<T[]> => {
  const schema: JsonMap = { type: "array", items, description };
  if (listType) {
    schema["x-kubernetes-list-type"] = listType.type;
    if (listType.type === "map") schema["x-kubernetes-list-map-keys"] = listType.keys;
  }
  return declared(schema);
};

export const stringList = (description: string): Schema<string[]> => array(item.string(), description);

/** An object with these properties; those named in `required` must be present. */
export const object = <P extends Properties, const R extends keyof P & string = never>(
  properties: P,
  description: string,
  required?: readonly R[],
): Schema<ObjectOf<P, R>> => {
  const schema: JsonMap = { type: "object", description, properties };
  if (required?.length) schema.required = required;
  return declared(schema);
};

/** An object with these (optional) properties that keeps every other field as sent. */
export const openObjectOf = <P extends Properties>(
  properties: P,
  description: string,
): Schema<ObjectOf<P> & Record<string, unknown>> =>
  declared({ type: "object", description, properties, "x-kubernetes-preserve-unknown-fields": true });

/** The same schema with its own description (a shared shape described where it is used). */
export const describedAs = <T>(schema: Schema<T>, description: string): Schema<T> =>
  declared({ ...schema, description });

/** An object used as a map from any key to values of one schema. */
export const mapOf = <T>(values: Schema<T>, description: string): Schema<Record<string, T>> =>
  declared({ type: "object", description, additionalProperties: values });

export const stringMap = (description: string): Schema<Record<string, string>> => mapOf(item.string(), description);

/** An object whose fields the specification does not show: kept as sent. */
export const openObject = (description: string): Schema<Record<string, unknown>> =>
  declared({ type: "object", description, "x-kubernetes-preserve-unknown-fields": true });

/** Kubernetes' IntOrString (a port number or name, a percentage). */
export const intOrString = (description: string): Schema<number | string> =>
  declared({ "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }], description });

/** Schemas without a description of their own: list items and map values, described by their container. */
export const item = {
  string: <const V extends string = string>(values?: readonly V[]): Schema<V> =>
    declared(values ? { type: "string", enum: [...values] } : { type: "string" }),
  stringList: (): Schema<string[]> => declared({ type: "array", items: { type: "string" } }),
};

/** The top-level fields of a kind other than apiVersion, kind and metadata (spec, status, data...). */
export type KindSchema = Properties;

/** A kind's object type: the envelope plus its top-level fields, each optional (the object schema requires none). */
export type KindOf<S extends KindSchema> = KubeObject & ObjectOf<S>;
