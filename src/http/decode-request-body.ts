// The request-body hook of the resource handler: Kubernetes protobuf (kubectl's typed clients send it for built-in
// kinds) decoded into the JSON object shape the registry validates, for resources whose definition names a protobuf
// message and for DeleteOptions; every other body goes to the JSON/YAML codec as before. Responses stay JSON.

import { errors } from "../apimachinery/errors.ts";
import type { RequestContext, ResourceDefinition } from "../registry/types.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";
import { valueNestingBeyond } from "../utils/value-nesting-beyond.ts";
import { bodyMediaType, decodeBody } from "./codec.ts";
import { decodeEnvelopedObject } from "./protobuf/envelope.ts";
import { DELETE_OPTIONS_MESSAGE, protobufMessage } from "./protobuf/messages.ts";
import { type Query, queryValue } from "./query-options.ts";

export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";

/** What the hook reads of a resource request (a structural subset of ResourceRequest). */
export interface BodyRequest {
  info: { subresource: string };
  store: { definition: ResourceDefinition };
  context: RequestContext;
  query: Query;
  contentType: string | undefined;
  body: Buffer | undefined;
}

function isProtobuf(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(";");
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

/** The message of an object body: the resource's own kind, also for its status; an action subresource's own. */
function objectMessage(request: BodyRequest): string | undefined {
  const sub = request.info.subresource;
  if (sub && sub !== "status") return request.store.definition.subresources?.[sub]?.protobuf?.message;
  return request.store.definition.protobuf?.message;
}

/** Unknown fields follow fieldValidation as for JSON bodies (registry/decode.ts): Strict 400, Warn a warning. */
function reportUnknown(request: BodyRequest, unknown: string[]): void {
  if (unknown.length === 0) return;
  const mode = queryValue(request.query, "fieldValidation") || "Warn";
  if (mode === "Strict") {
    const { kind, version } = request.store.definition;
    throw errors.badRequest(
      `${kind} in version "${version}" cannot be handled as a ${kind}: strict decoding error: ${unknown.join(", ")}`,
    );
  }
  if (mode === "Warn") request.context.warnings.push(...unknown);
}

/**
 * Decodes a request body: an object of the request's resource (`object`) or DeleteOptions (`delete`). Empty bodies
 * decode to undefined. Protobuf is taken where a message is known; otherwise 415 as before.
 */
export function decodeRequestBody(request: BodyRequest, purpose: "object" | "delete"): unknown {
  const message = purpose === "delete" ? DELETE_OPTIONS_MESSAGE : objectMessage(request);
  if (message === undefined || !isProtobuf(request.contentType)) {
    return decodeBody(request.body, bodyMediaType(request.contentType, false));
  }
  const body = request.body;
  if (body === undefined || body.length === 0) return undefined;
  const spec = protobufMessage(message);
  if (!spec) throw errors.unsupportedMediaType(["application/json", "application/yaml"]);
  const unknown: string[] = [];
  const object = decodeEnvelopedObject(body, spec, unknown);
  // Messages and the JSON inside them are bounded one by one; together they may nest deeper.
  if (valueNestingBeyond(object, MAX_NESTING_DEPTH)) throw errors.nestedTooDeeply("the request body");
  if (purpose === "delete") {
    // Every group version carries meta/v1's DeleteOptions (typed clients send e.g. rbac.authorization.k8s.io/v1).
    if (typeof object.apiVersion === "string" && /^([^/]+\/)?v1$/.test(object.apiVersion)) {
      object.apiVersion = "meta.k8s.io/v1";
    }
    return object;
  }
  reportUnknown(request, unknown);
  return object;
}
