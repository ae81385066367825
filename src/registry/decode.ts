// Turns a request body into an object of this resource: checks apiVersion and kind, then removes unknown fields
// and reports them according to fieldValidation (Strict: 400, Warn: warning header, Ignore: silent).

import { errors } from "../apimachinery/errors.ts";
import type { CompiledSchema } from "../apimachinery/schema.ts";
import { isPlainObject, type KubeObject } from "../apimachinery/types.ts";
import type { FieldValidation, RequestContext, ResourceDefinition } from "./types.ts";

export function decodeObject(
  definition: ResourceDefinition,
  schema: CompiledSchema,
  body: unknown,
  fieldValidation: FieldValidation | undefined,
  context: RequestContext,
): KubeObject {
  const kind = definition.kind;
  const expectedApiVersion = definition.group ? `${definition.group}/${definition.version}` : definition.version;
  if (!isPlainObject(body)) {
    throw errors.badRequest(
      `${kind} in version "${definition.version}" cannot be handled as a ${kind}: the request body must be a JSON or YAML object`,
    );
  }
  if (body.apiVersion !== undefined && body.apiVersion !== expectedApiVersion) {
    throw errors.badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expectedApiVersion})`,
    );
  }
  if (body.kind !== undefined && body.kind !== kind) {
    throw errors.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${kind})`);
  }
  if (body.metadata !== undefined && !isPlainObject(body.metadata)) {
    throw errors.badRequest(
      `${kind} in version "${definition.version}" cannot be handled as a ${kind}: metadata must be an object`,
    );
  }
  const object = body as KubeObject;
  object.apiVersion = expectedApiVersion;
  object.kind = kind;
  object.metadata ??= {};

  const unknown = schema.prune(object);
  if (unknown.length > 0) {
    const texts = unknown.map((path) => `unknown field "${path}"`);
    const mode = fieldValidation ?? "Warn";
    if (mode === "Strict") {
      throw errors.badRequest(
        `${kind} in version "${definition.version}" cannot be handled as a ${kind}: strict decoding error: ${texts.join(", ")}`,
      );
    }
    if (mode === "Warn") context.warnings.push(...texts);
  }
  return object;
}
