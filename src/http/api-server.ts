// The HTTPS API server: fastify with one wildcard route and our own dispatcher, running the request pipeline in
// the fixed order of ARCHITECTURE.md:
//   TLS -> request info -> body size limit -> authentication -> audit (received) -> authorization -> decode ->
//   registry -> encode -> audit (complete) -> metrics.
// Steps up to authorization run in the onRequest hook (so plugin routes pass them too); the body is read after
// authorization by the catch-all content type parser; decode, registry and encode run in the route handler.
// Plain resource requests take the same steps in direct-request.ts, ahead of fastify, while no audit hook listens.

import { randomUUID } from "node:crypto";
import type { Server as HttpServer, IncomingMessage } from "node:http";
import { createServer, type ServerOptions } from "node:https";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import type { Server as TlsServer } from "node:tls";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { errors, type StatusError } from "../apimachinery/errors.ts";
import type { Authenticator } from "../auth/types.ts";
import { decodedValue } from "../registry/encoded-json.ts";
import type { Authorizer, RequestContext, ResourceStore, UserInfo } from "../registry/types.ts";
import { requireUser } from "./authentication.ts";
import { authorizeRequest } from "./authorization.ts";
import { handleClientError } from "./client-error.ts";
import { bodyMediaType, decodeBody } from "./codec.ts";
import { directRequestHandler } from "./direct-request.ts";
import { encodeResponse, watchEventEncoder } from "./encode-response.ts";
import { errorSummary, logInternalError } from "./error-log.ts";
import { MAX_BODY_BYTES, toStatusError } from "./error-status.ts";
import type { HealthCheck } from "./health.ts";
import { metricLabels } from "./metric-labels.ts";
import { type ApiMetrics, createApiMetrics } from "./metrics.ts";
import { createNonResourceHandler } from "./non-resource.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import { publicPathMatcher } from "./public-paths.ts";
import { parsePretty, parseQueryString, type Query } from "./query-options.ts";
import { parseRequestInfo } from "./request-info.ts";
import { type RequestState, requestState, setRequestState } from "./request-state.ts";
import { handleResourceRequest } from "./resource-handler.ts";
import { ResourceIndex } from "./resource-index.ts";
import type { ApiServerHooks, CompletedRequest } from "./types.ts";
import { warningHeaderValues } from "./warning-headers.ts";
import { type ActiveWatch, serveWatch } from "./watch.ts";

export type { CompletedRequest, ReceivedRequest } from "./types.ts";

export interface ApiServerOptions {
  /** Every served resource, any group including core ("" -> /api/v1). */
  resources: ResourceStore[];
  /** Tried in order; all undefined -> 401. */
  authenticators: Authenticator[];
  authorizer: Authorizer;
  /**
   * clientCaPem: client certificates are requested (not required) and verified against it.
   * requestClientCertificates: request them even without a clientCaPem, so setClientCaPem can add one later.
   */
  tls: { certPem: string; keyPem: string; clientCaPem?: string; requestClientCertificates?: boolean };
  host: string;
  /** 0 = ephemeral. */
  port: number;
  /** Every path is also served under each prefix, e.g. ["/kubernetes/management"]. */
  pathPrefixes?: string[];
  /** Body of GET /version (includes major/minor). */
  version: Record<string, string>;
  /** Served without authentication. "/x" covers "/x" and "/x/..."; "/x/*" covers "/x/...". */
  publicPaths?: string[];
  /**
   * Asked per request for a public path: true makes this request authenticate (401 without valid credentials),
   * still without authorization. Lets a live setting protect /version (authenticateVersionEndpoint).
   */
  authenticatePublicPath?: (path: string) => boolean;
  /** Extra named checks for /healthz and /readyz. */
  healthChecks?: Record<string, () => Promise<void> | void>;
  /** Extra routes (login endpoints), registered inside the pipeline: they pass its hooks like any route. */
  plugins?: ((app: FastifyInstance) => void | Promise<void>)[];
  logger?: Logger;
  hooks?: ApiServerHooks;
  /** Metrics to record into; pass one to share its storage hook with the registry. Default: a fresh one. */
  metrics?: ApiMetrics;
  /** How long close() waits for in-flight requests before cutting connections. Default 10 s. */
  shutdownTimeoutMs?: number;
}

export interface RunningApiServer {
  url: string;
  port: number;
  metrics: Registry;
  /** Stops accepting, ends watches, waits (bounded) for in-flight requests. */
  close(): Promise<void>;
  /** Replaces the client CA (with tls.clientCaPem or tls.requestClientCertificates set); undefined removes it. */
  setClientCaPem(pem: string | undefined): void;
}

export const DEFAULT_PUBLIC_PATHS = ["/healthz", "/livez", "/readyz", "/version", "/.well-known/*"];

const ANONYMOUS: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] };
const SUPPORTED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const index = new ResourceIndex(options.resources);
  const metrics = options.metrics ?? createApiMetrics();
  const logger = options.logger;
  const hooks = options.hooks ?? {};
  const hasHooks = Boolean(hooks.onRequestReceived || hooks.onRequestComplete || hooks.onResponseStarted);
  /** Whether a request arriving now is reported to the hooks (and so gets an audit ID). */
  const audited = () => hasHooks && (hooks.enabled?.() ?? true);
  const isPublic = publicPathMatcher(options.publicPaths ?? DEFAULT_PUBLIC_PATHS);
  const prefixes = (options.pathPrefixes ?? []).map((p) => p.replace(/\/+$/, "")).filter((p) => p !== "");
  const activeWatches = new Set<ActiveWatch>();
  let closing = false;

  const ping: HealthCheck = () => {};
  const extraChecks = Object.entries(options.healthChecks ?? {});
  const shutdownCheck: HealthCheck = () => {
    if (closing) throw new Error("shutting down");
  };
  const nonResource = createNonResourceHandler({
    index,
    version: options.version,
    metrics,
    healthChecks: {
      healthz: new Map([["ping", ping], ...extraChecks]),
      livez: new Map([["ping", ping]]),
      readyz: new Map([["ping", ping], ...extraChecks, ["shutdown", shutdownCheck]]),
    },
  });

  const tlsOptions: ServerOptions = {
    key: options.tls.keyPem,
    cert: options.tls.certPem,
    // Request but do not require client certificates: bearer tokens stay possible; `socket.authorized` says verified.
    ...(options.tls.clientCaPem || options.tls.requestClientCertificates
      ? { ca: options.tls.clientCaPem, requestCert: true, rejectUnauthorized: false }
      : {}),
  };
  const direct = directRequestHandler({
    index,
    prefixes,
    authenticators: options.authenticators,
    authorizer: options.authorizer,
    metrics,
    logger,
    enabled: () => !closing && !audited(),
  });
  const app = Fastify({
    // Our own HTTPS server keeps fastify's (simpler) HTTP typings; HTTP/1.1 only, so watches are chunked streams.
    serverFactory: (handler) =>
      createServer(tlsOptions, (request, response) => {
        if (!direct(request, response)) handler(request, response);
      }) as unknown as HttpServer,
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    // Requests arriving while closing get a 503 Status from our onRequest hook instead of fastify's own body.
    return503OnClosing: false,
    clientErrorHandler: handleClientError,
    forceCloseConnections: "idle",
    routerOptions: { maxParamLength: 8192, querystringParser: parseQueryString },
    // Mount prefixes are stripped before routing, so plugin routes are served under them too.
    rewriteUrl: (req: IncomingMessage) =>
      prefixes.length ? stripPathPrefix(req.url ?? "/", prefixes) : (req.url ?? "/"),
    frameworkErrors: (error, request, reply) => {
      sendStatus(request, reply, toStatusError(error).error);
    },
  });

  /** Audit (ResponseComplete), then metrics: the last two pipeline steps. */
  const complete = (request: FastifyRequest, state: RequestState | undefined, code: number, watch: boolean) => {
    const latencySeconds = state ? (performance.now() - state.started) / 1000 : 0;
    if (hooks.onRequestComplete && state?.id && state.info) {
      const body = request.body;
      const requestBytes = Buffer.isBuffer(body) ? body.length : undefined;
      const info: CompletedRequest = {
        id: state.id,
        method: request.method,
        requestUri: request.originalUrl,
        requestInfo: state.info,
        user: state.user,
        userAgent: request.headers["user-agent"],
        sourceIp: request.socket?.remoteAddress,
        receivedAt: state.receivedAt,
        code,
        latencySeconds,
        ...state.failure,
        requestBytes,
        requestObject: requestBytes
          ? () =>
              decodeBody(body as Buffer, bodyMediaType(request.headers["content-type"], state.info?.verb === "patch"))
          : undefined,
        // Decoded only if a hook reads it (reads may answer with pre-encoded JSON).
        get responseObject() {
          state.responseObject = decodedValue(state.responseObject);
          return state.responseObject;
        },
      };
      try {
        hooks.onRequestComplete(info);
      } catch (error) {
        logger?.error({ err: errorSummary(error) }, "request completion hook failed");
      }
    }
    const labels = metricLabels({
      method: request.method,
      contentType: request.headers["content-type"],
      info: state?.info,
      definition: state?.store?.definition,
    });
    metrics.request(labels, code, watch ? undefined : latencySeconds);
  };

  // Bodies are already encoded. The identity serializer stops fastify from rewriting JSON Content-Types (quoting
  // parameters, adding charset; clients compare ours to upstream's spelling) and keeps the body a string, which
  // Node sends in one write with the headers (a Buffer body costs a second TLS record).
  function sendStatus(request: FastifyRequest, reply: FastifyReply, error: StatusError): FastifyReply {
    const state = requestState(request);
    if (state) {
      state.failure = { reason: error.status.reason, message: error.status.message };
      state.responseObject = error.status;
    }
    const warnings = state?.context?.warnings;
    if (warnings?.length) reply.header("Warning", warningHeaderValues(warnings));
    if (state?.id) reply.header("Audit-Id", state.id);
    return reply
      .code(error.code)
      .headers(error.headers)
      .header("content-type", "application/json")
      .serializer(asIs)
      .send(JSON.stringify(error.status));
  }

  app.removeAllContentTypeParsers();
  // The raw body is decoded later by our codec, after authorization (fastify enforces the 3 MiB limit while reading).
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => {
    done(null, body);
  });

  app.setErrorHandler((error, request, reply) => {
    const { error: status, internal } = toStatusError(error);
    if (internal) logInternalError(logger, error, requestState(request)?.info);
    if (reply.sent || reply.raw.headersSent) return;
    return sendStatus(request, reply, status);
  });
  app.setNotFoundHandler((request, reply) => sendStatus(request, reply, errors.pathNotFound()));

  // Pipeline up to authorization.
  app.addHook("onRequest", async (request, reply) => {
    const state: RequestState = {
      started: performance.now(),
      receivedAt: new Date(),
      id: audited() ? randomUUID() : "",
    };
    setRequestState(request, state);
    // Request info (the URL is already without mount prefix: rewriteUrl).
    const info = parseRequestInfo(request.method, request.url);
    state.info = info;
    if (info.resourceRequest) state.store = index.find(info.group, info.version, info.resource);
    if (closing) {
      reply.header("Connection", "close");
      throw errors.serviceUnavailable("the server is shutting down");
    }
    // Body size limit: refuse a declared oversize body before reading or authenticating anything.
    const length = request.headers["content-length"];
    if (length !== undefined && Number(length) > MAX_BODY_BYTES) {
      reply.header("Connection", "close");
      throw errors.requestEntityTooLarge(MAX_BODY_BYTES);
    }
    const publicPath = !info.resourceRequest && isPublic(info.path);
    const authenticate = !publicPath || options.authenticatePublicPath?.(info.path) === true;
    // Authentication.
    const user = authenticate ? await requireUser(options.authenticators, request.raw) : ANONYMOUS;
    state.user = user;
    // Audit: RequestReceived.
    if (hooks.onRequestReceived && state.id) {
      try {
        hooks.onRequestReceived({
          id: state.id,
          method: request.method,
          requestUri: request.originalUrl,
          requestInfo: info,
          user,
          userAgent: request.headers["user-agent"],
          sourceIp: request.socket?.remoteAddress,
          receivedAt: state.receivedAt,
        });
      } catch (error) {
        logger?.error({ err: errorSummary(error) }, "request received hook failed");
      }
    }
    // Authorization.
    if (!publicPath) await authorizeRequest(options.authorizer, info, user, request.query as Query);
    state.context = {
      user,
      authorizer: options.authorizer,
      warnings: [],
      userAgent: request.headers["user-agent"],
      now: state.receivedAt,
    } satisfies RequestContext;
  });

  app.addHook("onResponse", (request, reply, done) => {
    const state = requestState(request);
    if (!state?.watching) complete(request, state, reply.statusCode, false);
    done();
  });

  for (const plugin of options.plugins ?? []) await plugin(app);

  // Decode -> registry -> encode.
  app.route({
    method: SUPPORTED_METHODS,
    url: "/*",
    handler: async (request, reply) => {
      const state = requestState(request)!;
      const info = state.info!;
      const context = state.context!;
      const query = request.query as Query;
      if (!info.resourceRequest) {
        const response = await nonResource({
          method: request.method,
          path: info.path,
          query,
          accept: request.headers.accept,
          ifNoneMatch: request.headers["if-none-match"],
        });
        if (response.headers) reply.headers(response.headers);
        return reply
          .code(response.code)
          .header("content-type", response.contentType)
          .serializer(asIs)
          .send(response.body);
      }
      const store = state.store;
      if (!store) throw errors.pathNotFound();
      const outcome = await handleResourceRequest({
        info,
        store,
        context,
        query,
        accept: request.headers.accept,
        contentType: request.headers["content-type"],
        body: request.body as Buffer | undefined,
      });
      const target = { definition: outcome.definition, includeObject: outcome.includeObject, now: context.now };
      if (outcome.type === "watch") {
        state.watching = true;
        reply.hijack();
        const { group, plural } = outcome.definition;
        metrics.watchOpened(group, plural);
        let ended = false;
        await serveWatch({
          response: reply.raw,
          store,
          context,
          options: outcome.options,
          encode: watchEventEncoder(outcome.format, target),
          headers: () => {
            const headers: Record<string, string | string[]> = {};
            if (context.warnings.length) headers.Warning = warningHeaderValues(context.warnings);
            if (state.id) headers["Audit-Id"] = state.id;
            return headers;
          },
          active: activeWatches,
          onEnd: (code, status) => {
            ended = true;
            metrics.watchClosed(group, plural);
            if (status) state.failure = { reason: status.reason, message: status.message };
            complete(request, state, code, true);
          },
          onInternalError: (error) =>
            logger?.error(
              { err: errorSummary(error), verb: "watch", group, resource: plural },
              "internal error starting watch",
            ),
        });
        // Audit: ResponseStarted, once the stream is open (a watch that failed to start has already completed).
        if (!ended && hooks.onResponseStarted && state.id) {
          try {
            hooks.onResponseStarted({
              id: state.id,
              method: request.method,
              requestUri: request.originalUrl,
              requestInfo: info,
              user: state.user,
              userAgent: request.headers["user-agent"],
              sourceIp: request.socket?.remoteAddress,
              receivedAt: state.receivedAt,
            });
          } catch (error) {
            logger?.error({ err: errorSummary(error) }, "response started hook failed");
          }
        }
        return reply;
      }
      state.responseObject = outcome.value;
      const encoded = encodeResponse(outcome.value, outcome.format, parsePretty(query), target);
      if (context.warnings.length) reply.header("Warning", warningHeaderValues(context.warnings));
      if (state.id) reply.header("Audit-Id", state.id);
      return reply.code(outcome.code).header("content-type", encoded.contentType).serializer(asIs).send(encoded.body);
    },
  });

  await app.listen({ host: options.host, port: options.port });
  const port = (app.server.address() as AddressInfo).port;
  const url = `https://${hostForUrl(options.host)}:${port}`;
  logger?.info({ url }, "API server listening");

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      for (const watch of [...activeWatches]) watch.stop();
      const done = app.close();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), options.shutdownTimeoutMs ?? 10_000);
        timer.unref();
      });
      if (await Promise.race([done.then(() => false), timedOut])) {
        logger?.warn("in-flight requests still running at shutdown deadline; closing connections");
        app.server.closeAllConnections();
        await done;
      }
      clearTimeout(timer);
    })();
    return closed;
  };

  // New connections verify client certificates against the new CAs; connections already open keep their verdict.
  const setClientCaPem = (pem: string | undefined): void => {
    const tls = app.server as unknown as TlsServer;
    tls.setSecureContext({ key: options.tls.keyPem, cert: options.tls.certPem, ca: pem });
  };

  return { url, port, metrics: metrics.registry, close, setClientCaPem };
}

const asIs = (body: unknown): string => body as string;
