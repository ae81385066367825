// The request object of a create-only action resource (tokens, signing key rotations): apiVersion and kind must be
// this kind's when given, unknown fields are dropped with a warning, the rest is validated against the schema
// (422 with field errors). status in a request is ignored: the server writes it.

import { errors } from "../../../apimachinery/errors.ts";
import type { CompiledSchema } from "../../../apimachinery/schema.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";

export function decodeActionSpec<T>(
  body: KubeObject | undefined,
  kind: string,
  schema: CompiledSchema,
  context: RequestContext,
): T {
  const apiVersion = `${GROUP}/${VERSION}`;
  if (body === undefined) return {} as T;
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    throw errors.badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (body.kind !== undefined && body.kind !== kind) {
    throw errors.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${kind})`);
  }
  const object: KubeObject = {
    ...body,
    apiVersion,
    kind,
    metadata: isPlainObject(body.metadata) ? structuredClone(body.metadata) : {},
  };
  delete object.status;
  if (object.spec === null) delete object.spec;
  for (const path of schema.prune(object)) context.warnings.push(`unknown field "${path}"`);
  const errs = schema.validate(object);
  if (errs.length) throw errors.invalid({ group: GROUP, kind }, object.metadata.name ?? "", errs);
  return (object.spec ?? {}) as T;
}
