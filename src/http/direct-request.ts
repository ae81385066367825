// Plain resource requests served straight from node:https, in front of fastify. The same pipeline steps in the same
// order as api-server.ts:
//   request info -> authentication -> authorization -> body -> registry -> encode -> metrics
// without the framework's per-request routing, hook chain, body parser and reply objects, which cost about as much
// CPU as a read itself. Taken for get, list, create, update, patch, delete and deletecollection of a served
// resource, while the server is not closing and no audit hook listens (audit events are built by the fastify path
// alone), and only for the well-formed common case: a body with a Content-Length within the limit and a plain
// Content-Type. Everything else falls through to fastify, the reference (watches, non-resource paths, plugin
// routes, HEAD and other methods, streamed or oversize bodies, unusual Content-Types, paths that fail to parse).
// What a client sees is the same on both paths: api-server.test.ts sends its read and write cases through both.

import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { errors } from "../apimachinery/errors.ts";
import type { Authenticator } from "../auth/types.ts";
import type { Authorizer, RequestContext, ResourceStore } from "../registry/types.ts";
import { requireUser } from "./authentication.ts";
import { authorizeRequest } from "./authorization.ts";
import { encodeResponse } from "./encode-response.ts";
import { logInternalError } from "./error-log.ts";
import { MAX_BODY_BYTES, toStatusError } from "./error-status.ts";
import { metricLabels } from "./metric-labels.ts";
import type { ApiMetrics } from "./metrics.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import { parsePretty, parseQueryString } from "./query-options.ts";
import { parseRequestInfo, type RequestInfo } from "./request-info.ts";
import { handleResourceRequest } from "./resource-handler.ts";
import type { ResourceIndex } from "./resource-index.ts";
import { warningHeaderValues } from "./warning-headers.ts";

export interface DirectRequestOptions {
  index: ResourceIndex;
  /** Mount prefixes, stripped as fastify's rewriteUrl does. */
  prefixes: readonly string[];
  authenticators: readonly Authenticator[];
  authorizer: Authorizer;
  metrics: ApiMetrics;
  logger?: Logger;
  /** Asked per request; false sends the request to fastify (the server is closing, or audit is listening). */
  enabled(): boolean;
}

/** Serves the request and returns true, or returns false at once without touching it. */
export type DirectRequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

const DIRECT_VERBS = new Set(["get", "list", "create", "update", "patch", "delete", "deletecollection"]);
/** A media type with token parameters: a strict subset of what fastify accepts, which answers everything else. */
const PLAIN_CONTENT_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;\s*[\w.+-]+=[\w.+-]+)*$/;

/**
 * The body the request carries as fastify would hand it to the handler (undefined: none; a Buffer, possibly empty,
 * whenever a Content-Type is sent), its declared length, or false when fastify must take the request.
 */
function bodyShape(method: string, headers: IncomingMessage["headers"]): { expected: number; buffer: boolean } | false {
  // A streamed body is read by fastify under the size limit.
  if (headers["transfer-encoding"] !== undefined) return false;
  const length = headers["content-length"];
  const expected = length === undefined ? 0 : /^\d{1,8}$/.test(length) ? Number(length) : Number.NaN;
  // Oversize (413) and malformed lengths are answered by fastify.
  if (!(expected <= MAX_BODY_BYTES)) return false;
  // fastify ignores the body of a GET; the rare GET with one goes there too.
  if (method === "GET") return expected === 0 ? { expected, buffer: false } : false;
  const contentType = headers["content-type"];
  // Without a Content-Type fastify skips the body only when the length is absent or exactly "0".
  if (contentType === undefined) return length === undefined || length === "0" ? { expected, buffer: false } : false;
  return PLAIN_CONTENT_TYPE.test(contentType) ? { expected, buffer: true } : false;
}

export function directRequestHandler(options: DirectRequestOptions): DirectRequestHandler {
  return (request, response) => {
    const method = request.method ?? "";
    if (method !== "GET" && method !== "POST" && method !== "PUT" && method !== "PATCH" && method !== "DELETE") {
      return false;
    }
    const body = bodyShape(method, request.headers);
    if (!body) return false;
    if (!options.enabled()) return false;
    const url = options.prefixes.length ? stripPathPrefix(request.url ?? "/", options.prefixes) : (request.url ?? "/");
    let info: RequestInfo;
    try {
      info = parseRequestInfo(method, url);
    } catch {
      return false;
    }
    if (!info.resourceRequest || !DIRECT_VERBS.has(info.verb)) return false;
    const store = options.index.find(info.group, info.version, info.resource);
    if (!store) return false;
    // serve() answers every failure itself; this only keeps a fault after the answer (metrics) from going unhandled.
    serve(options, { request, response, url, info, store, body }).catch((error) =>
      logInternalError(options.logger, error, info),
    );
    return true;
  };
}

interface DirectRequest {
  request: IncomingMessage;
  response: ServerResponse;
  url: string;
  info: RequestInfo;
  store: ResourceStore;
  body: { expected: number; buffer: boolean };
}

async function serve(options: DirectRequestOptions, direct: DirectRequest): Promise<void> {
  const { request, response, info, store } = direct;
  const started = performance.now();
  const q = direct.url.indexOf("?");
  const query = q === -1 ? {} : parseQueryString(direct.url.slice(q + 1));
  let context: RequestContext | undefined;
  let code: number;
  try {
    const user = await requireUser(options.authenticators, request);
    await authorizeRequest(options.authorizer, info, user, query);
    // Read only once the caller may make this request, as fastify parses bodies after its onRequest hook.
    const body = direct.body.buffer ? await readBody(request, direct.body.expected) : undefined;
    context = {
      user,
      authorizer: options.authorizer,
      warnings: [],
      userAgent: request.headers["user-agent"],
      now: new Date(),
    };
    const outcome = await handleResourceRequest({
      info,
      store,
      context,
      query,
      accept: request.headers.accept,
      contentType: request.headers["content-type"],
      body,
    });
    // Only watches stream, and they are not served here.
    if (outcome.type !== "body") throw new Error(`unexpected ${outcome.type} outcome for ${info.verb}`);
    const target = { definition: outcome.definition, includeObject: outcome.includeObject, now: context.now };
    const encoded = encodeResponse(outcome.value, outcome.format, parsePretty(query), target);
    code = outcome.code;
    send(response, code, encoded.contentType, encoded.body, {}, context);
  } catch (error) {
    const { error: status, internal } = toStatusError(error);
    if (internal) logInternalError(options.logger, error, info);
    code = status.code;
    if (response.headersSent) response.destroy();
    else send(response, code, "application/json", JSON.stringify(status.status), status.headers, context);
  }
  const labels = metricLabels({
    method: request.method ?? "",
    contentType: request.headers["content-type"],
    info,
    definition: store.definition,
  });
  options.metrics.request(labels, code, (performance.now() - started) / 1000);
}

/** The request body (its Content-Length already checked against the limit); rejects when the client goes away. */
function readBody(request: IncomingMessage, expected: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    request.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    request.once("end", () => {
      // A copy, as fastify makes: nothing keeps a view over the socket's read buffer alive.
      if (received === expected) resolve(Buffer.concat(chunks, received));
      else reject(errors.badRequest("the request body does not match its Content-Length"));
    });
    request.once("error", () => reject(errors.badRequest("the request body was not received in full")));
  });
}

/** Headers as the fastify path sends them; the body goes out in one write with them (a string, see api-server.ts). */
function send(
  response: ServerResponse,
  code: number,
  contentType: string,
  body: string,
  extra: Record<string, string>,
  context: RequestContext | undefined,
): void {
  const headers: Record<string, string | string[] | number> = { ...extra, "content-type": contentType };
  if (context?.warnings.length) headers.warning = warningHeaderValues(context.warnings);
  headers["content-length"] = Buffer.byteLength(body);
  response.writeHead(code, headers);
  response.end(body);
}
