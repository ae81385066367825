// Sends a request to the host's API as a given identity: the agent's own credential (its ServiceAccount, which may
// only impersonate) plus Impersonate-User and Impersonate-Group, so the host's RBAC decides. Used for requests
// arriving over the tunnel (an HTTP/2 stream) and at the direct endpoint (an HTTP/1.1 request); a small answer goes
// back in one piece (tunnel-protocol.ts relayedWhole), any other streams as it comes (watches, large lists), and a
// caller that leaves cancels the host request. Upgrades (exec and the like) switch protocols end to end when the
// host does. A GET of one named object is one whole exchange on a kept-alive connection of the forwarder's own
// (kept-alive-connections.ts: about a seventh less of the agent's CPU per relayed GET than https.request, BENCHMARKS.md);
// everything else goes through https.request, which streams.

import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { constants, type ServerHttp2Stream } from "node:http2";
import { request as httpsRequest } from "node:https";
import type { Duplex, Readable, Writable } from "node:stream";
import { parseRequestInfo } from "../http/request-info.ts";
import {
  filteredHeaders,
  forwardableRequestHeader,
  forwardableResponseHeader,
  relayedWhole,
  UPGRADED_HEADER,
} from "../http/tunnel/tunnel-protocol.ts";
import { http } from "../utils/node-http.ts";
import {
  AnswerTooLongError,
  KeptAliveConnections,
  requestHead,
} from "../virtualcluster/kube/kept-alive-connections.ts";
import type { KubeAccess } from "../virtualcluster/kube/kube-access.ts";

export interface HostIdentity {
  user: string;
  groups: string[];
}

/** One request to forward: where, as whom, and its body. */
export interface HostCall {
  method: string;
  /** Path and query below the host's base URL. */
  path: string;
  headers: IncomingHttpHeaders;
  identity: HostIdentity;
  body: Readable;
  /**
   * Whether a body follows the head. The transport knows: a tunnel stream by its HEADERS frame's END_STREAM (the
   * platform strips Transfer-Encoding, so a chunked body arrives with neither length nor encoding), an HTTP/1.1
   * request by its Content-Length or Transfer-Encoding.
   */
  hasBody: boolean;
  /** The client's Upgrade header, for a request that switches protocols. */
  upgrade?: string;
}

/** Where the host's answer goes: the HTTP/2 stream of the tunnel, or an HTTP/1.1 response of the direct endpoint. */
export interface AnswerSink {
  /** Head of a normal answer. */
  respond(status: number, headers: OutgoingHttpHeaders): void;
  /** The host switched protocols: the head, then raw bytes both ways on the returned stream. */
  switched(headers: OutgoingHttpHeaders): Duplex;
  body: Writable;
  /** The caller left or the transport failed: stop. */
  onClose(stop: () => void): void;
  headersSent(): boolean;
  /** Ends abruptly (the host failed mid-answer). */
  abort(): void;
}

/** Whether an HTTP/1.1 request's head announces a body. */
export const http1HasBody = (headers: IncomingHttpHeaders): boolean =>
  headers["content-length"] !== undefined
    ? headers["content-length"] !== "0"
    : headers["transfer-encoding"] !== undefined;

const responseHeaders = (incoming: IncomingHttpHeaders): OutgoingHttpHeaders =>
  filteredHeaders(incoming, forwardableResponseHeader);

/**
 * Answers to a GET of one object up to this are read whole. A longer one (an object near the host's size limit,
 * about 1.5 MiB in etcd) stops the exchange and the GET goes again through https.request, which streams it: the
 * agent never holds more than this for one request.
 */
const MAX_WHOLE_EXCHANGE_BYTES = 1024 * 1024;
/** kube-apiserver's own default request timeout. */
const WHOLE_EXCHANGE_TIMEOUT_MS = 60_000;
const WATCH_PARAMETER = /[?&]watch=/;

/**
 * Whether a call is a GET of one named object: no body, no upgrade, no subresource (logs and proxies stream), no
 * watch parameter. Its answer is read whole on a kept-alive connection.
 */
function wholeExchange(call: HostCall): boolean {
  if (call.method !== "GET" || call.hasBody || call.upgrade !== undefined || WATCH_PARAMETER.test(call.path)) {
    return false;
  }
  const info = parseRequestInfo("GET", call.path);
  return info.resourceRequest && info.verb === "get" && info.subresource === "";
}

/** The Status a client gets when the host cannot be reached. */
function hostUnreachable(error: Error): string {
  return JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    reason: "ServiceUnavailable",
    code: 503,
    message: `the cluster's agent cannot reach its API server: ${error.message}`,
  });
}

export class HostForwarder {
  readonly #access: KubeAccess;
  /** Where requests go, worked out once: protocol, host, port and the base path calls are appended to. */
  readonly #target: { send: typeof httpsRequest; hostname: string; port: string; basePath: string; host: string };
  /** Kept-alive connections for whole exchanges, where the access has plain ones (not through a proxy). */
  readonly #connections: KeptAliveConnections | undefined;
  /**
   * Requests forwarded and answer chunks relayed so far: the agent gives its spare heap back (a full collection, a
   * pause) only once this stops changing, so a busy watch is never paused for it.
   */
  forwarded = 0;
  /** Requests forwarded to the host so far (the agent's usage for cost control). */
  requests = 0;

  constructor(access: KubeAccess) {
    this.#access = access;
    const base = new URL(access.server);
    this.#target = {
      send: base.protocol === "http:" ? http.request : httpsRequest,
      hostname: base.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: base.port,
      basePath: base.pathname.replace(/\/+$/, ""),
      host: base.host,
    };
    this.#connections = access.connect ? new KeptAliveConnections(access.connect) : undefined;
  }

  /** Closes the idle kept-alive connections (whole exchanges in flight finish on theirs). */
  close(): void {
    this.#connections?.close();
  }

  /** Forwards one call and pipes the answer into `sink`. */
  async forward(call: HostCall, sink: AnswerSink): Promise<void> {
    this.forwarded++;
    this.requests++;
    const options = await this.#access.requestOptions();
    const headers: OutgoingHttpHeaders = filteredHeaders(call.headers, forwardableRequestHeader);
    Object.assign(headers, options.headers);
    headers["impersonate-user"] = call.identity.user;
    if (call.identity.groups.length) headers["impersonate-group"] = call.identity.groups;
    if (call.upgrade) {
      headers.connection = "Upgrade";
      headers.upgrade = call.upgrade;
    }
    if (this.#connections && wholeExchange(call) && (await this.#exchange(this.#connections, call, headers, sink))) {
      return;
    }
    const { send, hostname, port, basePath } = this.#target;
    const out = send({ ...options, hostname, port, path: basePath + call.path, method: call.method, headers });
    let done = false;
    sink.onClose(() => {
      if (!done) out.destroy();
    });
    /** The host failed: a 503 Status while nothing was answered yet, else the answer ends abruptly. */
    const fail = (error: Error) => {
      if (done) return;
      done = true;
      if (sink.headersSent()) {
        sink.abort();
        return;
      }
      const body = hostUnreachable(error);
      sink.respond(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      sink.body.end(body);
    };
    out.once("response", (answer: IncomingMessage) => {
      const status = answer.statusCode ?? 502;
      const relayed = responseHeaders(answer.headers);
      answer.once("error", fail);
      if (relayedWhole(answer.headers)) {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => {
          this.forwarded++;
          chunks.push(chunk);
        });
        answer.once("end", () => {
          done = true;
          sink.respond(status, relayed);
          sink.body.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
        });
        return;
      }
      sink.respond(status, relayed);
      answer.on("data", () => {
        this.forwarded++;
      });
      answer.pipe(sink.body);
      answer.once("end", () => {
        done = true;
      });
    });
    out.once("upgrade", (answer: IncomingMessage, socket: Duplex, head: Buffer) => {
      done = true;
      const duplex = sink.switched(responseHeaders(answer.headers));
      if (head.length) duplex.write(head);
      socket.pipe(duplex);
      duplex.pipe(socket);
      socket.once("close", () => duplex.end());
      duplex.once("close", () => socket.destroy());
    });
    out.once("error", fail);
    // An upgrade sends no body: what the client sends goes over the switched connection once the host switched.
    if (!call.upgrade && call.hasBody) call.body.pipe(out);
    else out.end();
  }

  /**
   * Forwards a GET of one object as one exchange and relays its answer whole (head and body in one write). False
   * when it must go through https.request instead: a head https.request would refuse in the same way (so the caller
   * sees the same error), or an answer too long to be one object.
   */
  async #exchange(
    connections: KeptAliveConnections,
    call: HostCall,
    headers: OutgoingHttpHeaders,
    sink: AnswerSink,
  ): Promise<boolean> {
    const { basePath, host } = this.#target;
    let head: string;
    try {
      head = requestHead("GET", basePath + call.path, host, headers);
    } catch {
      return false;
    }
    let left = false;
    sink.onClose(() => {
      left = true;
    });
    try {
      const answer = await connections.exchange("GET", {
        head,
        timeoutMs: WHOLE_EXCHANGE_TIMEOUT_MS,
        maxBodyBytes: MAX_WHOLE_EXCHANGE_BYTES,
      });
      this.forwarded++;
      if (left) return true;
      const relayed = responseHeaders(answer.headers);
      relayed["content-length"] = answer.body.length;
      sink.respond(answer.status, relayed);
      sink.body.end(answer.body);
    } catch (error) {
      if (error instanceof AnswerTooLongError) return false;
      if (left) return true;
      const body = hostUnreachable(error as Error);
      sink.respond(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      sink.body.end(body);
    }
    return true;
  }
}

/** The answer sink of a tunnel stream. */
export function streamSink(stream: ServerHttp2Stream): AnswerSink {
  return {
    respond: (status, headers) => {
      if (!stream.destroyed) stream.respond({ ...headers, ":status": status });
    },
    switched: (headers) => {
      stream.respond({ ...headers, ":status": 200, [UPGRADED_HEADER]: "101" });
      return stream;
    },
    body: stream,
    onClose: (stop) => stream.once("close", stop),
    headersSent: () => stream.headersSent,
    abort: () => stream.close(constants.NGHTTP2_INTERNAL_ERROR),
  };
}

/** The answer sink of an HTTP/1.1 response (the direct endpoint; it never switches protocols). */
export function responseSink(response: ServerResponse): AnswerSink {
  return {
    respond: (status, headers) => {
      response.writeHead(status, headers);
      // A stream (a watch) shows its head at once; a whole answer goes out in one write.
      if (headers["content-length"] === undefined) response.flushHeaders();
    },
    switched: () => {
      throw new Error("a plain request does not switch protocols");
    },
    body: response,
    onClose: (stop) => response.once("close", stop),
    headersSent: () => response.headersSent,
    abort: () => response.destroy(),
  };
}

/** Writes an HTTP/1.1 head on a raw socket. */
function writeHead(socket: Duplex, status: number, text: string, headers: OutgoingHttpHeaders): void {
  const lines = [`HTTP/1.1 ${status} ${text}`];
  for (const [name, value] of Object.entries(headers)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) lines.push(`${name}: ${item}`);
  }
  socket.write(`${lines.join("\r\n")}\r\n\r\n`);
}

/** The answer sink of an upgrade request's socket (the direct endpoint). */
export function socketSink(socket: Duplex, upgrade: string): AnswerSink {
  let sent = false;
  return {
    respond: (status, headers) => {
      sent = true;
      writeHead(socket, status, "Upgrade Refused", { ...headers, connection: "close" });
    },
    switched: (headers) => {
      sent = true;
      writeHead(socket, 101, "Switching Protocols", { connection: "Upgrade", upgrade, ...headers });
      return socket;
    },
    body: socket,
    onClose: (stop) => socket.once("close", stop),
    headersSent: () => sent,
    abort: () => socket.destroy(),
  };
}
