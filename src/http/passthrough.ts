// Passthrough routes: paths the server relays instead of serving (a connected cluster's API through the platform, a
// cluster agent's tunnel). They take the pipeline's first steps — shutdown check, the connection reserve,
// authentication, audit (RequestReceived ... ResponseComplete), flow control and metrics — and then the route answers
// itself: its own authorization (what the caller may reach depends on what it reaches), the body streamed as it comes
// (no 3 MiB limit, nothing decoded), the answer streamed back. So the limits of the rest of the API hold here too: on
// a connection let in above --max-connections only a privileged caller is relayed (request-flow.ts), and a relayed
// request holds a seat of its caller's flow until its answer is complete, as any other request does — except
// long-running ones (a watch, kubectl exec or logs, the tunnel itself), which would keep one for hours and are
// exempt as kube-apiserver exempts them. Upgrades come through the server's `upgrade` event and take the same steps.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { errors, type StatusError } from "../apimachinery/errors.ts";
import type { Authenticator } from "../auth/types.ts";
import type { Authorizer, UserInfo } from "../registry/types.ts";
import { requireUser } from "./authentication.ts";
import { logInternalError } from "./error-log.ts";
import { toStatusError } from "./error-status.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import type { RequestFlow } from "./request-flow.ts";
import { parseRequestInfo } from "./request-info.ts";
import type { RequestReporter } from "./request-reporter.ts";
import { newRequestState, type RequestState } from "./request-state.ts";
import { type CallerChanges, watchCallerCheck } from "./watch-caller-check.ts";

export interface PassthroughCall {
  request: IncomingMessage;
  /** Path and query, mount prefix stripped. */
  url: string;
  user: UserInfo;
  authorizer: Authorizer;
}

export interface PassthroughRoute {
  /** Whether the route relays this URL (mount prefix stripped). Asked for every request: keep it cheap. */
  matches(url: string): boolean;
  /**
   * Answers an authenticated request and resolves with its status code once the answer is complete. Throws a
   * StatusError to refuse it before anything was answered.
   */
  serve(call: PassthroughCall, response: ServerResponse): Promise<number>;
  /** Answers an authenticated upgrade request on the client's socket; like serve. Without it: 404. */
  upgrade?(call: PassthroughCall, socket: Duplex, head: Buffer): Promise<number>;
  /**
   * Whether a plain request to this URL is long-running (a watch, a followed log): it holds no seat of flow control.
   * Upgrades always are. Without it: none is.
   */
  longRunning?(method: string, url: string): boolean;
  /**
   * The route's own authorization of `call` again (throws when it is refused now). With it and the server's
   * callerChanges, a long-running relay (a watch, an upgrade) ends once its caller changes or is refused.
   */
  authorizeAgain?(call: PassthroughCall): Promise<void>;
}

export interface PassthroughOptions {
  routes: readonly PassthroughRoute[];
  prefixes: readonly string[];
  authenticators: readonly Authenticator[];
  authorizer: Authorizer;
  reporter: RequestReporter;
  /** The connection reserve and flow control the rest of the API goes through. */
  flow: RequestFlow;
  closing(): boolean;
  logger?: Logger;
  /** Ends long-running relays whose caller changed (watch-caller-check.ts), for routes with authorizeAgain. */
  callerChanges?: CallerChanges;
}

export interface Passthrough {
  /** Serves a passthrough request and returns true; false at once for any other request. */
  serve(request: IncomingMessage, response: ServerResponse): boolean;
  /** Whether an upgrade request goes to a route (the server's shouldUpgradeCallback); others are plain requests. */
  takesUpgrade(request: IncomingMessage): boolean;
  /** Serves an upgrade request the server handed over (its `upgrade` event). */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** A Status answered on a raw socket (an upgrade request refused), then the connection closes. */
function refuseOnSocket(socket: Duplex, error: StatusError): void {
  const body = JSON.stringify(error.status);
  const head = [
    `HTTP/1.1 ${error.code} ${error.status.reason ?? "Error"}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
  ];
  for (const [name, value] of Object.entries(error.headers ?? {})) head.push(`${name}: ${value}`);
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

export function createPassthrough(options: PassthroughOptions): Passthrough {
  const { routes, prefixes, reporter, logger } = options;
  const routeFor = (request: IncomingMessage) => {
    if (routes.length === 0) return undefined;
    const url = prefixes.length ? stripPathPrefix(request.url ?? "/", prefixes) : (request.url ?? "/");
    const route = routes.find((candidate) => candidate.matches(url));
    return route && { route, url };
  };

  /**
   * Shutdown check, the connection reserve, authentication, audit (RequestReceived), flow control (a seat unless
   * `longRunning`; given back by the caller: flow.release).
   */
  async function admit(state: RequestState, url: string, longRunning: boolean): Promise<PassthroughCall> {
    if (options.closing()) {
      state.closeConnection = true;
      throw errors.shuttingDown();
    }
    // A connection let in on the reserve above --max-connections serves this one request, whatever its answer...
    options.flow.markReserve(state);
    const user = await requireUser(options.authenticators, state.raw);
    state.user = user;
    reporter.received(state);
    // ... and only a privileged caller's is relayed (it stays open for its next requests); anyone else gets 429.
    options.flow.checkReserve(state, user);
    if (!longRunning) await options.flow.admit(state, user);
    return { request: state.raw, url, user, authorizer: options.authorizer };
  }

  /**
   * For a long-running relay of a route that can authorize again: ends it (`stop`) once its caller is revoked,
   * changed, or refused by the route now; the check ends when `closed` fires.
   */
  function guardRelay(
    route: PassthroughRoute,
    call: PassthroughCall,
    stop: () => void,
    closed: (end: () => void) => void,
  ) {
    const { callerChanges } = options;
    const authorizeAgain = route.authorizeAgain;
    if (!callerChanges || !authorizeAgain) return;
    const guard = watchCallerCheck({
      changes: callerChanges,
      caller: call.user,
      resolveAgain: async () => {
        const user = await requireUser(options.authenticators, call.request);
        await authorizeAgain({ ...call, user });
        return user;
      },
    });
    guard.start(stop);
    closed(() => guard.end());
  }

  function begin(request: IncomingMessage, url: string): RequestState {
    const state = newRequestState(request, request.url ?? "/", reporter.auditId());
    state.info = parseRequestInfo(request.method ?? "GET", url);
    return state;
  }

  function failed(state: RequestState, error: unknown): StatusError {
    const { error: status, internal } = toStatusError(error);
    if (internal) logInternalError(logger, error, state.info);
    state.failure = { reason: status.status.reason, message: status.status.message };
    state.responseObject = status.status;
    return status;
  }

  async function serveRequest(
    route: PassthroughRoute,
    url: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const state = begin(request, url);
    let code: number;
    try {
      const longRunning = route.longRunning?.(request.method ?? "GET", url) === true;
      const call = await admit(state, url, longRunning);
      // The seat (if any) is given back once the answer is written out or the client left.
      if (response.closed) options.flow.release(state);
      else response.once("close", () => options.flow.release(state));
      if (longRunning && !response.closed) {
        guardRelay(
          route,
          call,
          () => response.destroy(),
          (end) => response.once("close", end),
        );
      }
      code = await route.serve(call, response);
    } catch (error) {
      const status = failed(state, error);
      code = status.code;
      if (response.headersSent) response.destroy();
      else {
        const body = JSON.stringify(status.status);
        response.writeHead(status.code, {
          ...status.headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(state.id ? { "audit-id": state.id } : {}),
          ...(state.closeConnection ? { connection: "close" } : {}),
        });
        response.end(body);
      }
    }
    reporter.completed(state, code);
  }

  async function serveUpgrade(
    route: PassthroughRoute,
    url: string,
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
  ): Promise<void> {
    const state = begin(request, url);
    socket.on("error", () => socket.destroy());
    let code: number;
    try {
      const call = await admit(state, url, true);
      if (!route.upgrade) throw errors.pathNotFound();
      if (!socket.destroyed) {
        guardRelay(
          route,
          call,
          () => socket.destroy(),
          (end) => socket.once("close", end),
        );
      }
      code = await route.upgrade(call, socket, head);
    } catch (error) {
      const status = failed(state, error);
      code = status.code;
      if (socket.writable) refuseOnSocket(socket, status);
      else socket.destroy();
    }
    reporter.completed(state, code);
  }

  return {
    serve(request, response) {
      const found = routeFor(request);
      if (!found) return false;
      serveRequest(found.route, found.url, request, response).catch((error) =>
        logInternalError(logger, error, undefined),
      );
      return true;
    },
    takesUpgrade(request) {
      return routeFor(request)?.route.upgrade !== undefined;
    },
    upgrade(request, socket, head) {
      const found = routeFor(request);
      if (!found) {
        socket.destroy();
        return;
      }
      serveUpgrade(found.route, found.url, request, socket, head).catch((error) =>
        logInternalError(logger, error, undefined),
      );
    },
  };
}
