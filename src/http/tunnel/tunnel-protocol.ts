// The reverse tunnel between the platform and a cluster's agent. The agent dials out (TLS to any replica) with an
// HTTP/1.1 upgrade to TUNNEL_PROTOCOL; once the platform answered 101, the same connection carries HTTP/2 the other
// way round: the platform is the HTTP/2 client and sends requests, the agent is the server that answers them. So a
// cluster behind NAT or a firewall needs only egress, and every request multiplexes over one connection with
// HTTP/2's flow control (watches and large lists stream; a slow client slows only its own stream).
//
// Paths on the tunnel: PROXY_PREFIX + the cluster API path (kubectl through the platform, forwarded with the
// caller's identity in USER_HEADER / GROUP_HEADER, which the agent turns into impersonation), and AGENT_API_PREFIX
// for what the platform asks of the agent itself (info, spaces, virtual clusters).

export const TUNNEL_PROTOCOL = "virtualcluster-tunnel/1";

/** In the 101 answer: the iss of the platform's direct cluster endpoint tokens, and the tunnel's id. */
export const ISSUER_HEADER = "x-platform-token-issuer";
export const TUNNEL_ID_HEADER = "x-platform-tunnel-id";

/** On proxied streams: the platform user the agent impersonates, and its groups (one header value each). */
export const USER_HEADER = "x-platform-user";
export const GROUP_HEADER = "x-platform-group";
/** On a proxied upgrade: the client's Upgrade header (HTTP/2 has no connection-specific headers). */
export const UPGRADE_HEADER = "x-platform-upgrade";
/** In the answer to a proxied upgrade: 101 when the host switched protocols (then the stream carries raw bytes). */
export const UPGRADED_HEADER = "x-platform-upgraded";

export const PROXY_PREFIX = "/proxy";
export const AGENT_API_PREFIX = "/agent/v1";

/** Headers never forwarded across the tunnel in either direction: per-connection, or platform credentials. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "host",
  "http2-settings",
]);

/** Headers of a client's request that must not reach the cluster: its platform credentials and identity claims. */
const CLIENT_ONLY = /^(authorization|cookie|x-platform-|impersonate-)/;

/** Verdicts on request header names seen so far (a few dozen in practice; bounded against made-up names). */
const requestHeaderVerdicts = new Map<string, boolean>();
const MAX_VERDICTS = 512;

/** Whether a client's request header may be forwarded to the cluster. Asked for every header of every request. */
export function forwardableRequestHeader(name: string): boolean {
  let verdict = requestHeaderVerdicts.get(name);
  if (verdict === undefined) {
    verdict = !HOP_BY_HOP.has(name) && !CLIENT_ONLY.test(name) && !name.startsWith(":");
    if (requestHeaderVerdicts.size < MAX_VERDICTS) requestHeaderVerdicts.set(name, verdict);
  }
  return verdict;
}

/**
 * Answers with a Content-Length up to this size are relayed in one piece, head and body written together (one TLS
 * record, one HTTP/2 DATA frame that ends the stream) instead of piped chunk by chunk; larger ones and streams
 * (watches, lists without a length) flow as they come.
 */
export const WHOLE_ANSWER_BYTES = 64 * 1024;

/** Whether an answer with these headers is relayed in one piece. */
export function relayedWhole(headers: Record<string, string | string[] | number | undefined>): boolean {
  return Number(headers["content-length"]) <= WHOLE_ANSWER_BYTES;
}

/** Whether an answer's header may be forwarded back to the client: never one that sets a cookie on its origin. */
export function forwardableResponseHeader(name: string): boolean {
  return !HOP_BY_HOP.has(name) && !name.startsWith(":") && !name.startsWith("x-platform-") && name !== "set-cookie";
}

/** Impersonation headers a caller sent: refused (403), never ignored and never forwarded. */
export function sentImpersonation(headers: Record<string, unknown>): string | undefined {
  return Object.keys(headers).find((name) => name.startsWith("impersonate-"));
}

/** The headers of `incoming` that `keep` lets through (HTTP/2 pseudo-headers and per-connection ones never do). */
export function filteredHeaders(
  incoming: Record<string, string | string[] | undefined>,
  keep: (name: string) => boolean,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const name of Object.keys(incoming)) {
    const value = incoming[name];
    if (value !== undefined && keep(name)) headers[name] = value;
  }
  return headers;
}
