// Connection and request limits of one API server, as kube-apiserver has them: how long a TLS handshake, a request's
// headers and its whole body may take, how long an idle kept-alive connection stays, and how many read-only and
// mutating requests may be served at once (--max-requests-inflight, --max-mutating-requests-inflight: the seats of
// flow control, src/http/flow-control/). Beyond kube-apiserver: how many connections may be open in total and per
// client address (--max-connections, --max-connections-per-client), by default derived from the open-file limit.
//
// The timeouts are node:https's own (handshakeTimeout, headersTimeout, requestTimeout, keepAliveTimeout), enforced
// by one timer per server that sweeps the connections in the middle of a request: nothing per request. Node's
// requestTimeout counts until the request is received (not answered), so watches stream for as long as they last.

import { type ConnectionLimits, defaultConnectionLimits, defaultsFor } from "./flow-control/connection-limit.ts";
import { openFileLimit } from "./flow-control/open-file-limit.ts";

export interface ServerLimits {
  /** A TLS handshake must finish within it (ms). */
  tlsHandshakeTimeoutMs: number;
  /**
   * A request's line and headers must arrive within it, counted from its first byte; a connection that sends nothing
   * after its handshake is closed after it too (ms). Answered 408, then the connection closes.
   */
  headerTimeoutMs: number;
  /**
   * The whole request, its body included, must arrive within it, counted from its first byte (ms; at least
   * headerTimeoutMs). Answered 408, then the connection closes. Responses are not limited: watches stream on.
   */
  bodyTimeoutMs: number;
  /** A kept-alive connection with no request in progress is closed after it (ms). */
  idleTimeoutMs: number;
  /** Read-only requests (GET, HEAD) served at once; past it 429. 0: no limit. Watches and health probes are exempt. */
  maxRequestsInflight: number;
  /** Mutating requests (every other method) served at once; past it 429. 0: no limit. */
  maxMutatingRequestsInflight: number;
  /** Open connections in total (a reserve above it serves probes and privileged callers); 0: no limit. */
  maxConnections: number;
  /** Open connections per client address (IPv6: per /64); 0: no limit. */
  maxConnectionsPerClient: number;
}

const CONNECTIONS = defaultConnectionLimits(openFileLimit());

/**
 * kube-apiserver's in-flight limits (400, 200), TLS handshake timeout (10 s, client-go's) and idle timeout (90 s,
 * which client-go's transport also keeps idle connections for, so neither side closes under the other); connection
 * caps from this process's open-file limit (connection-limit.ts: 3/4 of it up to 4,096, a quarter of that per client).
 */
export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  tlsHandshakeTimeoutMs: 10_000,
  headerTimeoutMs: 30_000,
  bodyTimeoutMs: 60_000,
  idleTimeoutMs: 90_000,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  maxConnections: CONNECTIONS.maxConnections,
  maxConnectionsPerClient: CONNECTIONS.maxPerClient,
};

/** The limits with defaults filled in; throws on a value Node would refuse or that makes no sense. */
export function serverLimits(given: Partial<ServerLimits> = {}): ServerLimits {
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS };
  for (const [name, value] of Object.entries(given) as [keyof ServerLimits, number | undefined][]) {
    if (value !== undefined) limits[name] = value;
  }
  // A total given without a per-client cap takes the per-client cap that goes with it.
  if (given.maxConnections !== undefined && given.maxConnectionsPerClient === undefined) {
    limits.maxConnectionsPerClient = defaultsFor(given.maxConnections).maxPerClient;
  }
  for (const [name, value] of Object.entries(limits)) {
    const timeout = name.endsWith("TimeoutMs");
    if (!Number.isSafeInteger(value) || value < (timeout ? 1 : 0)) {
      throw new RangeError(`${name} must be an integer of ${timeout ? "1 or more" : "0 or more"}, not ${value}`);
    }
  }
  if (limits.bodyTimeoutMs < limits.headerTimeoutMs) {
    throw new RangeError(
      `bodyTimeoutMs (${limits.bodyTimeoutMs}) must be at least headerTimeoutMs (${limits.headerTimeoutMs}): it counts the headers too`,
    );
  }
  return limits;
}

/** The connection caps and the reserve that goes with the total (connection-limit.ts). */
export function connectionLimitsOf(limits: ServerLimits): ConnectionLimits {
  return {
    maxConnections: limits.maxConnections,
    maxPerClient: limits.maxConnectionsPerClient,
    reserve: defaultsFor(limits.maxConnections).reserve,
  };
}

/** The node:https server options that enforce the timeouts. */
export function nodeTimeoutOptions(limits: ServerLimits): {
  handshakeTimeout: number;
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    handshakeTimeout: limits.tlsHandshakeTimeoutMs,
    headersTimeout: limits.headerTimeoutMs,
    requestTimeout: limits.bodyTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    // How often the header and body deadlines are checked (Node's default, 30 s, would let a 30 s deadline run to
    // 60 s): every second, or more often for shorter timeouts.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(limits.headerTimeoutMs / 4))),
  };
}
