// The request pipeline: the one entry point of every request the API server serves (passthrough routes aside:
// passthrough.ts relays them). It takes each request straight from node:https, in the fixed order of
// docs/architecture.md ("A request, in order"):
//
//   TLS              node:https (api-server.ts); authentication reads client certificates from the TLS socket
//   request info     verb, group, version, resource, namespace, name, subresource; mount prefix stripped (serve);
//                    a path that does not decode is 400
//   body size limit  a declared Content-Length above 3 MiB is 413 before anything is read; 503 while closing (admit)
//   authentication   the authenticators in order; none recognizes the caller: 401 (admit)
//   audit            hook onRequestReceived (admit)
//   impersonation    Impersonate-User/-Group/-Uid/-Extra-*: each part checked against the verb impersonate (403),
//                    then the request runs as that identity (impersonation.ts; admit)
//   flow control     a seat of the request's priority level in its flow's turn, or 429 (request-flow.ts,
//                    flow-control/; watches, probes and privileged callers exempt; given back once the answer is
//                    written out); before it, a connection on the reserve serves probes and privileged callers only
//   authorization    the Authorizer; denied: 403 (admit)
//   -- resource requests (/api/v1/..., /apis/<group>/<version>/...: every verb, watches, subresources, actions):
//   decode           the body read (request-body.ts; streamed ones too, 413 past 3 MiB), decoded per Content-Type
//   audit            hook onRequestBody: the event's request object, before anything is stored (fails: 500)
//   registry         handleResourceRequest -> ResourceStore
//   encode           JSON, YAML or Table; a watch streams instead (hook onResponseStarted once the stream is open)
//                    and ends once its caller is revoked or changes (callerChanges: watch-caller-check.ts)
//   -- every other request (discovery, OpenAPI, /version, health, /metrics, plugin routes: logins, SSO callbacks,
//   the OpenID provider, JWKS, the web console's files), once admitted, is handed to fastify, which only routes it,
//   parses its body and answers it (api-server.ts): such routes want a router and body parsers and are not hot,
//   while fastify's per-request routing, hooks and reply objects cost as much CPU as a read.
//   audit            hook onRequestComplete (a watch: when its stream ends; a fastify answer: once written out)
//   metrics          apiserver_request_total, apiserver_request_duration_seconds
//
// So every request is authenticated, admitted by flow control, authorized and audited exactly once, here.

import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { errors } from "../apimachinery/errors.ts";
import type { Authenticator } from "../auth/types.ts";
import type { Authorizer, UserInfo } from "../registry/types.ts";
import { authenticateRequest, requireUser } from "./authentication.ts";
import { authorizeRequest } from "./authorization.ts";
import { encodeResponse, watchEventEncoder } from "./encode-response.ts";
import { logInternalError } from "./error-log.ts";
import { MAX_BODY_BYTES, toStatusError } from "./error-status.ts";
import {
  authorizeImpersonation,
  dropImpersonationHeaders,
  hasImpersonationHeaders,
  type ImpersonationRequest,
  type ImpersonationResolver,
  impersonationRequested,
  kubernetesImpersonatedUser,
} from "./impersonation.ts";
import type { ApiMetrics } from "./metrics.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import { parsePretty, parseQueryString, type Query } from "./query-options.ts";
import { hasBody, readBody } from "./request-body.ts";
import type { RequestFlow } from "./request-flow.ts";
import { parseRequestInfo } from "./request-info.ts";
import type { RequestReporter } from "./request-reporter.ts";
import { handOver, newRequestState, type RequestState } from "./request-state.ts";
import { handleResourceRequest, type ResourceOutcome } from "./resource-handler.ts";
import type { ResourceIndex } from "./resource-index.ts";
import { warningHeaderValues } from "./warning-headers.ts";
import { type ActiveWatch, serveWatch } from "./watch.ts";
import { type CallerChanges, watchCallerCheck } from "./watch-caller-check.ts";

export interface PipelineOptions {
  index: ResourceIndex;
  /** Mount prefixes, e.g. "/kubernetes/management": every path is also served under each. */
  prefixes: readonly string[];
  authenticators: readonly Authenticator[];
  authorizer: Authorizer;
  /** Maps an allowed impersonation to the server's caller (default: the identity as requested, as upstream). */
  impersonation?: ImpersonationResolver;
  /** Non-resource paths served without authentication and authorization. */
  isPublic(path: string): boolean;
  /** Per request: more public non-resource requests (the web console's pages, for browser navigations only). */
  isPublicRequest?(path: string, headers: IncomingHttpHeaders): boolean;
  /** Asked per request for a public path: true makes it authenticate (still without authorization). */
  authenticatePublicPath?(path: string): boolean;
  reporter: RequestReporter;
  metrics: ApiMetrics;
  /** Flow control and the connection reserve; admit() waits for a seat, the answer's end gives it back. */
  flow: RequestFlow;
  logger?: Logger;
  /** True once close() began: requests get 503 and the connection closes. */
  closing(): boolean;
  /** Open watches, which close() ends. */
  activeWatches: Set<ActiveWatch>;
  /** With it, an open watch ends once its caller changes (watch-caller-check.ts); without, it runs its course. */
  callerChanges?: CallerChanges;
}

/** Answers an admitted non-resource request (fastify's router); its state comes along (request-state.ts handOver). */
export type NonResourceServer = (request: IncomingMessage, response: ServerResponse) => void;

export interface RequestPipeline {
  /** Serves a request: a resource request to its end, any other up to authorization, then by `next`. */
  serve(request: IncomingMessage, response: ServerResponse, next: NonResourceServer): void;
}

const ANONYMOUS: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] };
/** The methods the API answers (fastify's route takes the same); any other gets the 404 of an unknown path. */
export const ANSWERED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const answered = new Set(ANSWERED_METHODS);

export function createRequestPipeline(options: PipelineOptions): RequestPipeline {
  const { index, prefixes, reporter, metrics, logger } = options;

  function serve(request: IncomingMessage, response: ServerResponse, next: NonResourceServer): void {
    const requestUri = request.url ?? "/";
    const url = prefixes.length ? stripPathPrefix(requestUri, prefixes) : requestUri;
    const state = newRequestState(request, requestUri, reporter.auditId());
    // Request info.
    try {
      state.info = parseRequestInfo(request.method ?? "", url);
    } catch (error) {
      reporter.completed(state, sendFailure(response, state, error));
      return;
    }
    const served = state.info.resourceRequest
      ? serveResource(state, url, response)
      : admitNonResource(state, url, response, next);
    // Both answer every failure themselves; this only keeps a fault after the answer from going unhandled.
    served.catch((error) => logInternalError(logger, error, state.info));
  }

  /** The steps up to authorization, then fastify answers; the completion is reported once the answer is out. */
  async function admitNonResource(
    state: RequestState,
    url: string,
    response: ServerResponse,
    next: NonResourceServer,
  ): Promise<void> {
    try {
      await admit(state, queryOf(url), response);
    } catch (error) {
      reporter.completed(state, sendFailure(response, state, error));
      return;
    }
    // Audit: ResponseComplete; metrics (a client that leaves before the answer is out completes nothing, as before).
    response.once("finish", () => reporter.completed(state, response.statusCode));
    // Whatever fastify answers carries the request's audit ID, and ends a reserve connection.
    if (state.id) response.setHeader("audit-id", state.id);
    if (state.closeConnection) response.setHeader("connection", "close");
    handOver(state);
    next(state.raw, response);
  }

  async function serveResource(state: RequestState, url: string, response: ServerResponse): Promise<void> {
    const request = state.raw;
    const info = state.info!;
    state.store = index.find(info.group, info.version, info.resource);
    let code: number;
    try {
      const query = queryOf(url);
      // Body size limit, authentication, audit (RequestReceived), authorization.
      await admit(state, query, response);
      const context = state.context!;
      // Decode: the body as sent (the resource handler decodes it per Content-Type).
      if (hasBody(request.method ?? "", request.headers)) {
        try {
          state.body = await readBody(request);
        } catch (error) {
          // The rest of the body may still be on its way.
          state.closeConnection = true;
          throw error;
        }
      }
      const store = state.store;
      if (!store || !answered.has(request.method ?? "")) throw errors.pathNotFound();
      // Audit: the request object is built before the registry runs (a 500 here means nothing was stored).
      reporter.bodyRead(state);
      // Registry.
      const outcome = await handleResourceRequest({
        info: state.info!,
        store,
        context,
        query,
        accept: request.headers.accept,
        contentType: request.headers["content-type"],
        body: state.body,
      });
      if (outcome.type === "watch") {
        // Watches are exempt from flow control (this releases nothing); their completion comes at the end.
        options.flow.release(state);
        return await streamWatch(state, outcome, response, query);
      }
      // Encode.
      state.responseObject = outcome.value;
      const target = { definition: outcome.definition, includeObject: outcome.includeObject, now: context.now };
      const encoded = encodeResponse(outcome.value, outcome.format, parsePretty(query), target);
      code = outcome.code;
      send(response, code, encoded.contentType, encoded.body, state, undefined);
    } catch (error) {
      code = sendFailure(response, state, error);
    }
    // Audit: ResponseComplete; metrics. (The seat is given back once the answer is written out: response "close".)
    reporter.completed(state, code);
  }

  /**
   * The steps up to authorization (body size limit, authentication, audit, impersonation, flow control,
   * authorization); fills state.context. The seat it takes is given back when `response` closes.
   */
  async function admit(state: RequestState, query: Query, response: ServerResponse): Promise<void> {
    const info = state.info!;
    // Shutting down: 503, and the connection closes (close() waits for the requests in flight).
    if (options.closing()) {
      state.closeConnection = true;
      throw errors.shuttingDown();
    }
    // A connection let in on the reserve above --max-connections serves this one request, whatever its answer.
    options.flow.markReserve(state);
    // Body size limit: refuse a declared oversize body before reading or authenticating anything.
    const length = state.raw.headers["content-length"];
    if (length !== undefined && Number(length) > MAX_BODY_BYTES) {
      state.closeConnection = true;
      throw errors.requestEntityTooLarge(MAX_BODY_BYTES);
    }
    const publicPath =
      !info.resourceRequest &&
      (options.isPublic(info.path) || options.isPublicRequest?.(info.path, state.raw.headers) === true);
    const mustAuthenticate = !publicPath || options.authenticatePublicPath?.(info.path) === true;
    // Authentication. A public path that asks for impersonation authenticates too, so the caller's right to it can
    // be checked (without credentials: anonymous, which has none).
    let user = ANONYMOUS;
    if (mustAuthenticate) user = await requireUser(options.authenticators, state.raw);
    else if (hasImpersonationHeaders(state.raw)) {
      user = (await authenticateRequest(options.authenticators, state.raw)) ?? ANONYMOUS;
    }
    state.user = user;
    // Audit: RequestReceived.
    reporter.received(state);
    // A connection let in on the reserve above --max-connections: probes and privileged callers only (429).
    options.flow.checkReserve(state, user);
    // Impersonation: each part the caller asks to act as must be allowed to it (403), then the request is the
    // impersonated identity's.
    const acting = await impersonate(state, user);
    // Flow control: a seat of the request's priority level, in its flow's turn (429 when its queue is full).
    await options.flow.admit(state, acting);
    releaseOnClose(state, response);
    // Authorization.
    if (!publicPath) await authorizeRequest(options.authorizer, info, acting, query);
    state.context = {
      user: acting,
      authorizer: options.authorizer,
      warnings: [],
      userAgent: state.raw.headers["user-agent"],
      now: state.receivedAt,
    };
  }

  /** Gives the request's seat back once its answer is written out (or its client went away). */
  function releaseOnClose(state: RequestState, response: ServerResponse): void {
    if (!state.flow) return;
    if (response.closed) options.flow.release(state);
    else response.once("close", () => options.flow.release(state));
  }

  /** The identity the request runs as: the caller, or whom it may impersonate (state.impersonatedUser). */
  async function impersonate(state: RequestState, user: UserInfo): Promise<UserInfo> {
    const requested = impersonationRequested(state.raw);
    if (!requested) return user;
    const acting = await impersonated(user, requested);
    state.impersonatedUser = acting;
    state.impersonation = requested;
    dropImpersonationHeaders(state.raw);
    return acting;
  }

  /** Whom `user` acts as by `requested`, when each part of it is allowed to them (403). */
  async function impersonated(user: UserInfo, requested: ImpersonationRequest): Promise<UserInfo> {
    await authorizeImpersonation(options.authorizer, user, requested);
    return await (options.impersonation ?? kubernetesImpersonatedUser)(requested, user);
  }

  /** An open watch's caller resolved and authorized again, as admit() did; throws when that fails now. */
  async function resolveAgain(state: RequestState, query: Query): Promise<UserInfo> {
    const user = await requireUser(options.authenticators, state.raw);
    const acting = state.impersonation ? await impersonated(user, state.impersonation) : user;
    await authorizeRequest(options.authorizer, state.info!, acting, query);
    return acting;
  }

  /** Streams a watch; its completion is reported when the stream ends. */
  async function streamWatch(
    state: RequestState,
    outcome: Extract<ResourceOutcome, { type: "watch" }>,
    response: ServerResponse,
    query: Query,
  ): Promise<void> {
    const context = state.context!;
    const { group, plural } = outcome.definition;
    const { callerChanges } = options;
    state.watching = true;
    metrics.watchOpened(group, plural);
    let ended = false;
    await serveWatch({
      response,
      store: state.store!,
      context,
      options: outcome.options,
      encode: watchEventEncoder(outcome.format, {
        definition: outcome.definition,
        includeObject: outcome.includeObject,
        now: context.now,
      }),
      headers: () => {
        const headers: OutgoingHttpHeaders = {};
        if (context.warnings.length) headers.Warning = warningHeaderValues(context.warnings);
        if (state.id) headers["Audit-Id"] = state.id;
        return headers;
      },
      active: options.activeWatches,
      onEnd: (code, status) => {
        ended = true;
        metrics.watchClosed(group, plural);
        if (status) state.failure = { reason: status.reason, message: status.message };
        reporter.completed(state, code);
      },
      onInternalError: (error) => logInternalError(logger, error, state.info),
      guard:
        callerChanges &&
        watchCallerCheck({
          changes: callerChanges,
          caller: context.user,
          resolveAgain: () => resolveAgain(state, query),
        }),
    });
    // Audit: ResponseStarted, once the stream is open (a watch that failed to start has already completed).
    if (!ended) reporter.started(state);
  }

  /** Answers a failure with its Status; returns the code. */
  function sendFailure(response: ServerResponse, state: RequestState, error: unknown): number {
    const { error: status, internal } = toStatusError(error);
    if (internal) logInternalError(logger, error, state.info);
    state.failure = { reason: status.status.reason, message: status.status.message };
    state.responseObject = status.status;
    if (response.headersSent) response.destroy();
    else send(response, status.code, "application/json", JSON.stringify(status.status), state, status.headers);
    return status.code;
  }

  return { serve };
}

function queryOf(url: string): Query {
  const q = url.indexOf("?");
  return q === -1 ? {} : parseQueryString(url.slice(q + 1));
}

/**
 * Writes a whole answer. The body is a string, which Node sends in one write with the headers (a Buffer costs a
 * second TLS record); header names are lower case, as fastify spelled them.
 */
function send(
  response: ServerResponse,
  code: number,
  contentType: string,
  body: string,
  state: RequestState,
  extra: Record<string, string> | undefined,
): void {
  const headers: Record<string, string | string[] | number> = {};
  if (state.closeConnection) headers.connection = "close";
  const warnings = state.context?.warnings;
  if (warnings?.length) headers.warning = warningHeaderValues(warnings);
  if (state.id) headers["audit-id"] = state.id;
  if (extra) for (const name of Object.keys(extra)) headers[name.toLowerCase()] = extra[name];
  headers["content-type"] = contentType;
  const encoded = state.info?.verb === "get" ? largeBody(body) : undefined;
  const bytes = encoded ? encoded.length : Buffer.byteLength(body);
  headers["content-length"] = bytes;
  response.writeHead(code, headers);
  response.end(encoded ?? body);
  // Until it is written out, the answer counts against its flow (request-flow.ts).
  state.flow?.sending(bytes);
}

/** Bodies from this many characters up are sent from a kept UTF-8 copy (largeBody()), up to a total of bytes. */
const LARGE_BODY_CHARACTERS = 64 * 1024;
const LARGE_BODIES_BYTES = 32 * 1024 * 1024;
const largeBodies = new Map<string, Buffer>();
let largeBodiesBytes = 0;

/**
 * The UTF-8 of a large GET answer, kept for the next reads: the registry hands out one string per stored version
 * of a large object (store-encoded.ts), so a user reading the same large object on many connections costs one
 * conversion, not one per request (converting and the garbage it leaves were most of such a read's work). Small
 * answers stay strings, which Node sends in one write with the headers. Oldest first out past the byte budget.
 */
function largeBody(body: string): Buffer | undefined {
  if (body.length < LARGE_BODY_CHARACTERS) return undefined;
  let encoded = largeBodies.get(body);
  if (encoded === undefined) {
    encoded = Buffer.from(body);
    largeBodies.set(body, encoded);
    largeBodiesBytes += encoded.length;
    for (const [oldest, bytes] of largeBodies) {
      if (largeBodiesBytes <= LARGE_BODIES_BYTES) break;
      largeBodies.delete(oldest);
      largeBodiesBytes -= bytes.length;
    }
  }
  return encoded;
}
