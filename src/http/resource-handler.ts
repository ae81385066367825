// Dispatches one authorized resource request to its ResourceStore: checks scope and verbs, decodes the body and
// query options, calls the registry and says what to encode (or that a watch stream is wanted).

import { errors, type StatusError, successStatus } from "../apimachinery/errors.ts";
import { isPlainObject, type KubeObject } from "../apimachinery/types.ts";
import type { EncodedJson } from "../registry/encoded-json.ts";
import type {
  ActionHandler,
  ObjectRef,
  PatchType,
  RequestContext,
  ResourceDefinition,
  ResourceStore,
  WatchOptions,
} from "../registry/types.ts";
import { bodyMediaType, decodeBody, PATCH_MEDIA_TYPES } from "./codec.ts";
import { decodeRequestBody } from "./decode-request-body.ts";
import { parseDeleteOptions } from "./delete-options.ts";
import { negotiateResponse, type ResponseFormat } from "./negotiation.ts";
import {
  type IncludeObject,
  parseIncludeObject,
  parseListOptions,
  parsePatchOptions,
  parsePretty,
  parseWatchOptions,
  parseWriteOptions,
  type Query,
} from "./query-options.ts";
import type { RequestInfo } from "./request-info.ts";
import { resourceVerbs } from "./resource-verbs.ts";

export interface ResourceRequest {
  info: RequestInfo;
  store: ResourceStore;
  context: RequestContext;
  query: Query;
  accept: string | undefined;
  contentType: string | undefined;
  body: Buffer | undefined;
}

export type ResourceOutcome =
  | {
      type: "body";
      code: number;
      value: unknown;
      format: ResponseFormat;
      definition: ResourceDefinition;
      includeObject: IncludeObject;
    }
  | {
      type: "watch";
      options: WatchOptions;
      format: ResponseFormat;
      definition: ResourceDefinition;
      includeObject: IncludeObject;
    };

/** Verbs per definition, computed once (a sorted copy is built on every resourceVerbs call). */
const servedVerbs = new WeakMap<ResourceDefinition, ReadonlySet<string>>();

function verbsOf(definition: ResourceDefinition): ReadonlySet<string> {
  let verbs = servedVerbs.get(definition);
  if (!verbs) {
    verbs = new Set(resourceVerbs(definition));
    servedVerbs.set(definition, verbs);
  }
  return verbs;
}

function notSupported(definition: ResourceDefinition, verb: string): StatusError {
  return errors.methodNotSupported({ group: definition.group, resource: definition.plural }, verb || "this method");
}

/** A body that must be an object (create, update, action requests). */
function objectBody(request: ResourceRequest, required: boolean): KubeObject | undefined {
  const value = decodeRequestBody(request, "object");
  if (value === undefined) {
    if (required) throw errors.badRequest("the request body is empty: an object is required");
    return undefined;
  }
  if (!isPlainObject(value)) throw errors.badRequest("the request body must be an object");
  return value as KubeObject;
}

export async function handleResourceRequest(request: ResourceRequest): Promise<ResourceOutcome> {
  const { info, store, context, query } = request;
  const definition = store.definition;
  const verb = info.verb;
  const sub = info.subresource;

  // Scope: a namespaced resource needs /namespaces/{ns}/ except to list or watch across namespaces;
  // a cluster-scoped one never has it.
  if (definition.namespaced) {
    if (!info.namespacedPath && (info.name || sub || (verb !== "list" && verb !== "watch")))
      throw errors.pathNotFound();
  } else if (info.namespacedPath) {
    throw errors.pathNotFound();
  }
  const namespace = definition.namespaced && info.namespacedPath ? info.namespace : undefined;

  const readsMain = !sub && !definition.action && (verb === "get" || verb === "list" || verb === "watch");
  const format = negotiateResponse(request.accept, { table: readsMain, stream: verb === "watch" });
  const includeObject = format.kind === "table" ? parseIncludeObject(query) : "Metadata";
  const body = (code: number, value: unknown): ResourceOutcome => ({
    type: "body",
    code,
    value,
    format,
    definition,
    includeObject,
  });

  if (definition.action) {
    const action = definition.action;
    if (sub || !action.verbs.includes(verb as "create" | "get")) throw notSupported(definition, verb);
    if (verb === "create" && info.name) throw errors.methodNotAllowed();
    const input = verb === "create" ? objectBody(request, false) : undefined;
    const result = await action.handle({ context, body: input, namespace });
    return body(verb === "create" ? 201 : 200, result);
  }

  const verbs = verbsOf(definition);
  // A compact JSON answer can be the registry's encoding as is (no decode and re-encode per request).
  const encoded = format.kind === "json" && !parsePretty(query);
  if (sub) {
    const ref: ObjectRef = { name: info.name, subresource: sub };
    if (namespace) ref.namespace = namespace;
    if (sub === "status" && definition.statusSubresource) {
      if (verb !== "get" && verb !== "update" && verb !== "patch") throw notSupported(definition, verb);
      if (!verbs.has(verb)) throw notSupported(definition, verb);
      return body(200, await writeOrGet(request, ref, encoded));
    }
    const handler = definition.subresources?.[sub];
    if (!handler) throw errors.pathNotFound();
    return body(verb === "create" ? 201 : 200, await subresourceAction(request, handler, namespace));
  }

  if (!verbs.has(verb)) throw notSupported(definition, verb);
  switch (verb) {
    case "get":
    case "update":
    case "patch": {
      const ref: ObjectRef = { name: info.name };
      if (namespace) ref.namespace = namespace;
      if (verb === "patch") {
        const patched = await patch(request, ref);
        return body(patched.created ? 201 : 200, patched.object);
      }
      return body(200, await writeOrGet(request, ref, encoded));
    }
    case "list": {
      const options = parseListOptions(query, namespace);
      if (encoded && store.listEncoded) return body(200, await store.listEncoded(context, options));
      return body(200, await store.list(context, options));
    }
    case "watch":
      return {
        type: "watch",
        options: parseWatchOptions(query, namespace, info.name),
        format,
        definition,
        includeObject,
      };
    case "create": {
      if (info.name) throw errors.methodNotAllowed();
      const options = parseWriteOptions(query, "CreateOptions");
      const object = objectBody(request, true);
      if (encoded && store.createEncoded)
        return body(201, await store.createEncoded(context, namespace, object, options));
      return body(201, await store.create(context, namespace, object, options));
    }
    case "delete": {
      const options = parseDeleteOptions(deleteBody(request), query);
      const ref: ObjectRef = { name: info.name };
      if (namespace) ref.namespace = namespace;
      const result = await store.delete(context, ref, options);
      if (!result.removed) return body(200, result.object);
      const details = {
        name: info.name,
        group: definition.group,
        kind: definition.plural,
        uid: result.object.metadata.uid,
      };
      return body(200, successStatus(details));
    }
    case "deletecollection": {
      const list = parseListOptions(query, namespace);
      const options = parseDeleteOptions(deleteBody(request), query);
      return body(200, await store.deleteCollection(context, list, options));
    }
    default:
      throw errors.methodNotAllowed();
  }
}

function deleteBody(request: ResourceRequest): unknown {
  if (request.body === undefined || request.body.length === 0) return undefined;
  return decodeRequestBody(request, "delete");
}

/** GET or PUT of the main resource or its status; `encoded`: a GET may answer with the registry's encoding. */
async function writeOrGet(
  request: ResourceRequest,
  ref: ObjectRef,
  encoded: boolean,
): Promise<KubeObject | EncodedJson> {
  const { store, context, query } = request;
  switch (request.info.verb) {
    case "get":
      return encoded && store.getEncoded ? store.getEncoded(context, ref) : store.get(context, ref);
    case "update": {
      const options = parseWriteOptions(query, "UpdateOptions");
      return store.update(context, ref, objectBody(request, true), options);
    }
    case "patch":
      return (await patch(request, ref)).object;
    default:
      throw errors.methodNotAllowed();
  }
}

async function patch(request: ResourceRequest, ref: ObjectRef): Promise<{ object: KubeObject; created: boolean }> {
  const type = bodyMediaType(request.contentType, true) as PatchType;
  if (type === "strategic" && !request.store.definition.strategicMergePatch) {
    throw errors.unsupportedMediaType(PATCH_MEDIA_TYPES);
  }
  const options = parsePatchOptions(request.query, type);
  const value = decodeBody(request.body, type);
  if (value === undefined) throw errors.badRequest("the request body is empty: a patch is required");
  return request.store.patch(request.context, ref, type, value, options);
}

/** A create/get subresource such as kubeconfig: the parent is fetched first so a missing one is a proper 404. */
async function subresourceAction(
  request: ResourceRequest,
  handler: ActionHandler,
  namespace: string | undefined,
): Promise<KubeObject> {
  const { info, store, context } = request;
  const verb = info.verb;
  if (verb !== "create" && verb !== "get") throw notSupported(store.definition, verb);
  if (!handler.verbs.includes(verb)) throw notSupported(store.definition, verb);
  const parentRef: ObjectRef = { name: info.name };
  if (namespace) parentRef.namespace = namespace;
  const input = verb === "create" ? objectBody(request, false) : undefined;
  const parent = await store.get(context, parentRef);
  return handler.handle({ context, body: input, parent, namespace });
}
