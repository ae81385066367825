// Resource reads (get and list) served straight from node:https, in front of fastify. The same pipeline steps in
// the same order as api-server.ts:
//   request info -> authentication -> authorization -> registry -> encode -> metrics
// without the framework's per-request routing, hook chain and reply objects, which cost about as much CPU as the
// read itself. Taken only for a GET of a served resource without a body, while the server is not closing and no
// audit hook listens (audit events are built by the fastify path alone); everything else falls through to fastify
// (watches, writes, non-resource paths, plugin routes, requests with a body), which also answers paths that fail
// to parse. What a client sees is the same on both paths: api-server.test.ts runs its read cases on both.

import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Authenticator } from "../auth/types.ts";
import type { Authorizer, RequestContext, ResourceStore } from "../registry/types.ts";
import { requireUser } from "./authentication.ts";
import { authorizeRequest } from "./authorization.ts";
import { encodeResponse } from "./encode-response.ts";
import { logInternalError } from "./error-log.ts";
import { toStatusError } from "./error-status.ts";
import { metricLabels } from "./metric-labels.ts";
import type { ApiMetrics } from "./metrics.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import { parsePretty, parseQueryString } from "./query-options.ts";
import { parseRequestInfo, type RequestInfo } from "./request-info.ts";
import { handleResourceRequest } from "./resource-handler.ts";
import type { ResourceIndex } from "./resource-index.ts";
import { warningHeaderValues } from "./warning-headers.ts";

export interface DirectReadOptions {
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
export type DirectReadHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

export function directReadHandler(options: DirectReadOptions): DirectReadHandler {
  return (request, response) => {
    if (request.method !== "GET") return false;
    const headers = request.headers;
    // A GET with a body is unusual; the full path reads it under the size limit.
    if (headers["transfer-encoding"] !== undefined) return false;
    if (headers["content-length"] !== undefined && headers["content-length"] !== "0") return false;
    if (!options.enabled()) return false;
    const url = options.prefixes.length ? stripPathPrefix(request.url ?? "/", options.prefixes) : (request.url ?? "/");
    let info: RequestInfo;
    try {
      info = parseRequestInfo("GET", url);
    } catch {
      return false;
    }
    if (!info.resourceRequest || (info.verb !== "get" && info.verb !== "list")) return false;
    const store = options.index.find(info.group, info.version, info.resource);
    if (!store) return false;
    // serve() answers every failure itself; this only keeps a fault after the answer (metrics) from going unhandled.
    serve(options, { request, response, url, info, store }).catch((error) =>
      logInternalError(options.logger, error, info),
    );
    return true;
  };
}

interface DirectRead {
  request: IncomingMessage;
  response: ServerResponse;
  url: string;
  info: RequestInfo;
  store: ResourceStore;
}

async function serve(options: DirectReadOptions, read: DirectRead): Promise<void> {
  const { request, response, info, store } = read;
  const started = performance.now();
  const q = read.url.indexOf("?");
  const query = q === -1 ? {} : parseQueryString(read.url.slice(q + 1));
  let context: RequestContext | undefined;
  let code: number;
  try {
    const user = await requireUser(options.authenticators, request);
    await authorizeRequest(options.authorizer, info, user, query);
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
      body: undefined,
    });
    // get and list never stream; a "watch" outcome cannot happen here.
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
    method: "GET",
    contentType: request.headers["content-type"],
    info,
    definition: store.definition,
  });
  options.metrics.request(labels, code, (performance.now() - started) / 1000);
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
