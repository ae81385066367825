// The platform's half of a proxied request: a client's HTTP/1.1 request goes over the tunnel as one HTTP/2 stream
// (its platform credentials and per-connection headers left behind, the caller's identity added), and the answer
// comes back in one piece when small (tunnel-protocol.ts relayedWhole), otherwise as it comes, so watches and large
// lists flow with HTTP/2's back-pressure. A client that leaves cancels its stream, and the agent then cancels its request to the host. Upgrades (kubectl exec and the like) ride a stream
// too: once the host switched protocols, the stream carries the raw bytes both ways.

import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { type ClientHttp2Session, type ClientHttp2Stream, constants } from "node:http2";
import type { Duplex } from "node:stream";
import { errors, type StatusError } from "../../apimachinery/errors.ts";
import {
  filteredHeaders,
  forwardableRequestHeader,
  forwardableResponseHeader,
  relayedWhole,
  UPGRADE_HEADER,
  UPGRADED_HEADER,
} from "./tunnel-protocol.ts";

export interface ForwardedRequest {
  /** Path and query on the tunnel (PROXY_PREFIX + the cluster's path). */
  path: string;
  request: IncomingMessage;
  /** Added to the forwarded headers (the caller's identity). */
  headers: Record<string, string | string[]>;
}

function tunnelHeaders(forwarded: ForwardedRequest): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { ":method": forwarded.request.method ?? "GET", ":path": forwarded.path };
  return Object.assign(
    headers,
    filteredHeaders(forwarded.request.headers, forwardableRequestHeader),
    forwarded.headers,
  );
}

/**
 * The answer is served from the platform's origin whatever a cluster (or an agent of a Cluster owner's making) put
 * in it: a browser must neither sniff it into a page nor run it as the platform (a sandbox gives it an opaque
 * origin), and it sets no cookie here (forwardableResponseHeader drops Set-Cookie).
 */
const RELAYED_ANSWER_HEADERS = { "x-content-type-options": "nosniff", "content-security-policy": "sandbox" };

const responseHeaders = (incoming: IncomingHttpHeaders): OutgoingHttpHeaders => ({
  ...filteredHeaders(incoming, forwardableResponseHeader),
  ...RELAYED_ANSWER_HEADERS,
});

const hasBody = (request: IncomingMessage) =>
  request.headers["content-length"] !== undefined
    ? request.headers["content-length"] !== "0"
    : request.headers["transfer-encoding"] !== undefined;

/** The Status a client gets when the tunnel fails before the host answered. */
export function tunnelFailure(error: unknown): StatusError {
  const detail = error instanceof Error ? error.message : String(error);
  return errors.serviceUnavailable(`the connection to the cluster's agent failed: ${detail}`);
}

/**
 * Forwards one request and relays the answer; resolves with the status code once the answer is complete (or the
 * client left). Throws (before anything was answered) when the tunnel cannot take the request.
 */
export function forwardRequest(
  session: ClientHttp2Session,
  forwarded: ForwardedRequest,
  response: ServerResponse,
): Promise<number> {
  // A client that left before the route began has had its close event: a stream opened now (a watch) would stay
  // open on the agent with nobody to read it.
  if (response.closed) return Promise.resolve(499);
  const { request } = forwarded;
  const withBody = hasBody(request);
  const stream = session.request(tunnelHeaders(forwarded), { endStream: !withBody });
  if (withBody) request.pipe(stream);
  return new Promise((resolve, reject) => {
    let status = 0;
    const cancel = () => {
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
    };
    response.once("close", () => {
      cancel();
      resolve(status || 499);
    });
    stream.once("response", (headers) => {
      status = Number(headers[":status"]) || 502;
      const relayed = responseHeaders(headers);
      if (relayedWhole(headers)) {
        // Head and body in one write.
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.once("end", () => {
          response.writeHead(status, relayed);
          response.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
        });
        return;
      }
      response.writeHead(status, relayed);
      // A stream (a watch, a list without a length) shows its head at once.
      if (headers["content-length"] === undefined) response.flushHeaders();
      stream.pipe(response);
    });
    stream.once("error", (error) => {
      if (!status) reject(tunnelFailure(error));
      else response.destroy();
    });
    stream.once("close", () => {
      if (!status && stream.rstCode !== constants.NGHTTP2_NO_ERROR)
        reject(tunnelFailure(`stream reset (${stream.rstCode})`));
    });
  });
}

/** Writes a plain HTTP/1.1 answer on a raw socket (an upgrade request that got none). */
function writeRawAnswer(socket: Duplex, status: number, headers: OutgoingHttpHeaders, body?: ClientHttp2Stream): void {
  const lines = [`HTTP/1.1 ${status} ${status === 101 ? "Switching Protocols" : "Upgrade Refused"}`];
  for (const [name, value] of Object.entries(headers)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) lines.push(`${name}: ${item}`);
  }
  if (status !== 101) lines.push("connection: close");
  socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (body) body.pipe(socket);
}

/**
 * Forwards an upgrade request: when the host switches protocols the client gets the 101 and the stream carries the
 * bytes both ways until either side closes; otherwise the client gets the host's answer and the connection closes.
 */
export function forwardUpgrade(
  session: ClientHttp2Session,
  forwarded: ForwardedRequest,
  socket: Duplex,
  head: Buffer,
): Promise<number> {
  if (socket.destroyed) return Promise.resolve(499); // the client left before the route began (as above)
  const headers = tunnelHeaders(forwarded);
  headers[UPGRADE_HEADER] = forwarded.request.headers.upgrade ?? "";
  const stream = session.request(headers, { endStream: false });
  if (head.length) stream.write(head);
  return new Promise((resolve, reject) => {
    let status = 0;
    socket.once("close", () => {
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
      resolve(status || 499);
    });
    socket.once("error", () => socket.destroy());
    stream.once("response", (answer) => {
      const upgraded = answer[UPGRADED_HEADER] === "101";
      status = upgraded ? 101 : Number(answer[":status"]) || 502;
      const relayed = responseHeaders(answer);
      if (!upgraded) {
        writeRawAnswer(socket, status, relayed, stream);
        return;
      }
      writeRawAnswer(socket, 101, { connection: "Upgrade", upgrade: forwarded.request.headers.upgrade, ...relayed });
      stream.pipe(socket);
      socket.pipe(stream);
    });
    stream.once("error", (error) => {
      if (!status) reject(tunnelFailure(error));
      socket.destroy();
    });
    stream.once("close", () => {
      if (!status) reject(tunnelFailure(`stream reset (${stream.rstCode})`));
      else socket.end();
    });
  });
}
