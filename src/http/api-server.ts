// The HTTPS API server: one node:https server whose every request (passthrough routes aside) enters the request
// pipeline (resource-pipeline.ts, which states the order of its steps): authentication, audit, impersonation, flow
// control and authorization once, for every request. Resource requests it serves to the end; everything else —
// discovery, OpenAPI, /version, health, /metrics and plugin routes (login endpoints, JWKS) — it hands, admitted, to
// fastify, whose catch-all parser reads plugin routes' bodies and whose one wildcard route answers the non-resource
// paths. Both report through one RequestReporter (audit hooks, metrics), from the pipeline.
// The connection and request limits (server-limits.ts) are the node:https server's timeouts, the connection caps
// applied as connections are accepted (flow-control/connection-limit.ts), and flow control (request-flow.ts,
// flow-control/).

import type { Server as HttpServer, IncomingHttpHeaders, IncomingMessage } from "node:http";
import { createServer, type ServerOptions } from "node:https";
import type { AddressInfo, Server as NetServer } from "node:net";
import type { Server as TlsServer } from "node:tls";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { errors, type StatusError } from "../apimachinery/errors.ts";
import type { Authenticator } from "../auth/types.ts";
import type { Authorizer, ResourceStore, UserInfo } from "../registry/types.ts";
import { clientErrorHandler } from "./client-error.ts";
import { logInternalError } from "./error-log.ts";
import { MAX_BODY_BYTES, toStatusError } from "./error-status.ts";
import { inMastersGroup } from "./flow-control/classify.ts";
import { ConnectionGate } from "./flow-control/connection-limit.ts";
import { cpuContention } from "./flow-control/cpu-contention.ts";
import { FlowControl } from "./flow-control/flow-control.ts";
import { flowObserver, registerFlowGauges } from "./flow-metrics.ts";
import type { HealthCheck } from "./health.ts";
import type { ImpersonationResolver } from "./impersonation.ts";
import { type ApiMetrics, createApiMetrics } from "./metrics.ts";
import { createNonResourceHandler } from "./non-resource.ts";
import { createPassthrough, type PassthroughRoute } from "./passthrough.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import { publicPathMatcher } from "./public-paths.ts";
import { parseQueryString, type Query } from "./query-options.ts";
import { createRequestFlow } from "./request-flow.ts";
import { createRequestReporter } from "./request-reporter.ts";
import { handedOver, requestState, setRequestState } from "./request-state.ts";
import { ResourceIndex } from "./resource-index.ts";
import { ANSWERED_METHODS, createRequestPipeline } from "./resource-pipeline.ts";
import { connectionLimitsOf, nodeTimeoutOptions, type ServerLimits, serverLimits } from "./server-limits.ts";
import type { ApiServerHooks } from "./types.ts";
import { warningHeaderValues } from "./warning-headers.ts";
import type { ActiveWatch } from "./watch.ts";
import type { CallerChanges } from "./watch-caller-check.ts";

export type { CompletedRequest, ReceivedRequest } from "./types.ts";

export interface ApiServerOptions {
  /** Every served resource, any group including core ("" -> /api/v1). */
  resources: ResourceStore[];
  /** Tried in order; all undefined -> 401. */
  authenticators: Authenticator[];
  authorizer: Authorizer;
  /** Maps an allowed impersonation (Impersonate-User...) to a caller; default: the identity as requested. */
  impersonation?: ImpersonationResolver;
  /**
   * Callers exempt from flow control and let in on the connection reserve, as kube-apiserver exempts
   * system:masters. Default: members of system:masters.
   */
  privileged?: (user: UserInfo) => boolean;
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
  /** Body of GET /version (includes major/minor); a function when part of it is live. */
  version: Record<string, string> | (() => Record<string, string>);
  /** Served without authentication. "/x" covers "/x" and "/x/..."; "/x/*" covers "/x/...". */
  publicPaths?: string[];
  /** Per request: more public non-resource requests, e.g. the web console's pages for browser navigations only. */
  isPublicRequest?: (path: string, headers: IncomingHttpHeaders) => boolean;
  /**
   * Asked per request for a public path: true makes this request authenticate (401 without valid credentials),
   * still without authorization. Lets a live setting protect /version (authenticateVersionEndpoint).
   */
  authenticatePublicPath?: (path: string) => boolean;
  /** Extra named checks for /healthz and /readyz. */
  healthChecks?: Record<string, HealthCheck>;
  /**
   * Paths relayed instead of served (a connected cluster's API, an agent's tunnel): authenticated and audited, then
   * answered (and authorized) by the route itself, upgrades included (passthrough.ts).
   */
  passthrough?: PassthroughRoute[];
  /** Extra routes (login endpoints), registered inside the pipeline: they pass its hooks like any route. */
  plugins?: ((app: FastifyInstance) => void | Promise<void>)[];
  logger?: Logger;
  hooks?: ApiServerHooks;
  /** Metrics to record into; pass one to share its storage hook with the registry. Default: a fresh one. */
  metrics?: ApiMetrics;
  /** How long close() waits for in-flight requests before cutting connections. Default 10 s. */
  shutdownTimeoutMs?: number;
  /** Connection timeouts and in-flight limits; unset ones take DEFAULT_SERVER_LIMITS. */
  limits?: Partial<ServerLimits>;
  /** Open watches end once their caller changes (watch-caller-check.ts); without it they run their course. */
  callerChanges?: CallerChanges;
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

function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const index = new ResourceIndex(options.resources);
  const limits = serverLimits(options.limits);
  const metrics = options.metrics ?? createApiMetrics();
  const flowControl = new FlowControl({
    maxReadOnly: limits.maxRequestsInflight,
    maxMutating: limits.maxMutatingRequestsInflight,
    observer: flowObserver(metrics.registry),
    cpuContended: cpuContention(),
  });
  const connections = new ConnectionGate(connectionLimitsOf(limits));
  registerFlowGauges(metrics.registry, flowControl, connections);
  const flow = createRequestFlow({
    flow: flowControl,
    connections,
    privileged: options.privileged ?? inMastersGroup,
  });
  const logger = options.logger;
  const reporter = createRequestReporter(options.hooks ?? {}, metrics, logger);
  const prefixes = (options.pathPrefixes ?? []).map((p) => p.replace(/\/+$/, "")).filter((p) => p !== "");
  const activeWatches = new Set<ActiveWatch>();
  let closing = false;

  const pipeline = createRequestPipeline({
    index,
    prefixes,
    authenticators: options.authenticators,
    authorizer: options.authorizer,
    impersonation: options.impersonation,
    isPublic: publicPathMatcher(options.publicPaths ?? DEFAULT_PUBLIC_PATHS),
    isPublicRequest: options.isPublicRequest,
    authenticatePublicPath: options.authenticatePublicPath,
    reporter,
    metrics,
    flow,
    logger,
    closing: () => closing,
    activeWatches,
    callerChanges: options.callerChanges,
  });

  const passthrough = createPassthrough({
    routes: options.passthrough ?? [],
    prefixes,
    authenticators: options.authenticators,
    authorizer: options.authorizer,
    reporter,
    flow,
    closing: () => closing,
    logger,
    callerChanges: options.callerChanges,
  });

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
    ...nodeTimeoutOptions(limits),
    // Only passthrough routes switch protocols; any other upgrade request is served as a plain request.
    shouldUpgradeCallback: (request: IncomingMessage) => passthrough.takesUpgrade(request),
    key: options.tls.keyPem,
    cert: options.tls.certPem,
    // Request but do not require client certificates: bearer tokens stay possible; `socket.authorized` says verified.
    ...(options.tls.clientCaPem || options.tls.requestClientCertificates
      ? { ca: options.tls.clientCaPem, requestCert: true, rejectUnauthorized: false }
      : {}),
  };
  const app = Fastify({
    // Our own HTTPS server keeps fastify's (simpler) HTTP typings; HTTP/1.1 only, so watches are chunked streams.
    serverFactory: (handler) =>
      withConnectionGate(
        createServer(tlsOptions, (request, response) => {
          if (!passthrough.serve(request, response)) pipeline.serve(request, response, handler);
        }).on("upgrade", (request, socket, head) => passthrough.upgrade(request, socket, head)),
        connections,
      ) as unknown as HttpServer,
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    // Requests arriving while closing get a 503 Status from our onRequest hook instead of fastify's own body.
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(metrics),
    forceCloseConnections: "idle",
    routerOptions: { maxParamLength: 8192, querystringParser: parseQueryString },
    // Mount prefixes are stripped before routing, so plugin routes are served under them too.
    rewriteUrl: (req: IncomingMessage) =>
      prefixes.length ? stripPathPrefix(req.url ?? "/", prefixes) : (req.url ?? "/"),
    frameworkErrors: (error, request, reply) => {
      sendStatus(request, reply, toStatusError(error).error);
    },
  });

  // Bodies are already encoded. The identity serializer stops fastify from rewriting JSON Content-Types (quoting
  // parameters, adding charset; clients compare ours to upstream's spelling) and keeps the body a string, which
  // Node sends in one write with the headers (a Buffer body costs a second TLS record).
  function sendStatus(request: FastifyRequest, reply: FastifyReply, error: StatusError): FastifyReply {
    const state = requestState(request);
    if (state) {
      state.failure = { reason: error.status.reason, message: error.status.message };
      state.responseObject = error.status;
      if (state.closeConnection) reply.header("connection", "close");
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
  // Plugin routes get the raw body (fastify enforces the 3 MiB limit while reading); the audit event gets it too.
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_BODY_BYTES }, (request, body, done) => {
    const state = requestState(request);
    if (state && Buffer.isBuffer(body)) state.body = body;
    done(null, body);
  });

  app.setErrorHandler((error, request, reply) => {
    const { error: status, internal } = toStatusError(error);
    if (internal) logInternalError(logger, error, requestState(request)?.info);
    if (reply.sent || reply.raw.headersSent) return;
    return sendStatus(request, reply, status);
  });
  app.setNotFoundHandler((request, reply) => sendStatus(request, reply, errors.pathNotFound()));

  // Fastify serves only requests the pipeline admitted (authenticated, audited, through flow control, authorized):
  // it takes their state along. (The URL is already without mount prefix: rewriteUrl.)
  app.addHook("onRequest", async (request) => {
    const state = handedOver(request.raw);
    if (!state) throw new Error("a request reached fastify without passing the request pipeline");
    setRequestState(request, state);
  });

  // The answer's bytes count against the caller's flow until it is written out (flow control's fairness by bytes).
  app.addHook("onSend", (request, _reply, payload, done) => {
    if (typeof payload === "string" || Buffer.isBuffer(payload)) {
      requestState(request)?.flow?.sending(Buffer.byteLength(payload));
    }
    done(null, payload);
  });

  for (const plugin of options.plugins ?? []) await plugin(app);

  // Non-resource paths (resource requests never reach fastify).
  app.route({
    method: ANSWERED_METHODS,
    url: "/*",
    handler: async (request, reply) => {
      const info = requestState(request)!.info!;
      const response = await nonResource({
        method: request.method,
        path: info.path,
        query: request.query as Query,
        accept: request.headers.accept,
        ifNoneMatch: request.headers["if-none-match"],
      });
      if (response.headers) reply.headers(response.headers);
      return reply
        .code(response.code)
        .header("content-type", response.contentType)
        .serializer(asIs)
        .send(response.body);
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
      flowControl.close();
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

/** The server with its connection caps applied as connections are accepted, before TLS. */
function withConnectionGate<T extends NetServer>(server: T, gate: ConnectionGate): T {
  gate.install(server);
  return server;
}
