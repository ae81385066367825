// A resource's schema compiled once: validation with Kubernetes field errors, and pruning of unknown fields.
// The schema describes a whole object: apiVersion, kind and metadata (ObjectMeta) plus the resource's own
// top-level fields (spec, status, ...).

import type { ValidateFunction } from "ajv";
import type { FieldError } from "./field-errors.ts";
import { cloneJson } from "./json-values.ts";
import { objectMetaSchema } from "./object-meta-schema.ts";
import { compileWithAjv } from "./schema-ajv.ts";
import { toFieldErrors } from "./schema-errors.ts";
import { pruneUnknownFields } from "./schema-prune.ts";
import type { JsonMap } from "./types.ts";
import { illFormedStrings } from "./well-formed-strings.ts";

export interface CompiledSchema {
  /**
   * Every violation as a field error (`spec.access[0].verbs[1]`, `metadata.labels[app]`); empty when valid. Strings
   * that are not well-formed Unicode (a lone surrogate) are violations of every schema (well-formed-strings.ts).
   */
  validate(object: unknown): FieldError[];
  /**
   * Removes, IN PLACE, every field the schema does not declare and returns the removed paths (`spec.foo`). Below
   * objects without `properties`, with x-kubernetes-preserve-unknown-fields or additionalProperties, all is kept.
   * Also drops nulls of non-nullable fields without a default, unreported, as the API server does.
   */
  prune(object: unknown): string[];
}

/** The schema of the whole object, e.g. for OpenAPI; a fresh copy the caller may change. */
export function objectSchemaOf(topLevel: JsonMap): JsonMap {
  return cloneJson({
    type: "object",
    properties: {
      ...topLevel,
      apiVersion: {
        type: "string",
        description:
          "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
      },
      kind: {
        type: "string",
        description:
          "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.",
      },
      metadata: objectMetaSchema,
    },
  });
}

const compiled = new WeakMap<JsonMap, CompiledSchema>();

/**
 * The whole-object schema around a resource's top-level fields, once per `topLevel` object. ajv compiles it on the
 * first validation: compiling every resource's schema is a fifth of a platform's start-up, and most processes (the
 * CLI, a runtime, a test) validate few kinds or none.
 */
export function compileObjectSchema(topLevel: JsonMap): CompiledSchema {
  const cached = compiled.get(topLevel);
  if (cached) return cached;
  const schema = objectSchemaOf(topLevel);
  let check: ValidateFunction | undefined;
  const result: CompiledSchema = {
    validate(object) {
      check ??= compileWithAjv(schema);
      const unicode = illFormedStrings(object, schema);
      if (check(object)) return unicode;
      return [...toFieldErrors(check.errors ?? [], schema, object), ...unicode];
    },
    prune: (object) => pruneUnknownFields(object, schema),
  };
  compiled.set(topLevel, result);
  return result;
}
