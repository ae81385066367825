// The two ends of a reverse tunnel (tunnel-protocol.ts): the platform accepts an upgrade and becomes the HTTP/2
// client on that socket; the agent dials, receives the 101 and becomes the HTTP/2 server on it. Both hand the TLS
// socket itself to HTTP/2 (native, no copy through JavaScript) unless bytes of the other side were already read with
// the upgrade; those are put back in front through a small stream (correct, a little slower).

import type { IncomingHttpHeaders } from "node:http";
import {
  type ClientHttp2Session,
  connect as http2Connect,
  performServerHandshake,
  type ServerHttp2Session,
  type Settings,
} from "node:http2";
import { request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { Duplex } from "node:stream";
import { TUNNEL_PROTOCOL } from "./tunnel-protocol.ts";

/** Per-stream and per-connection windows large enough that a big list is not held to 64 KiB round trips. */
const STREAM_WINDOW = 1 << 20;
const CONNECTION_WINDOW = 16 << 20;
/** Requests in flight over one tunnel; more wait for a free stream. */
export const MAX_TUNNEL_STREAMS = 1000;
const SETTINGS: Settings = {
  initialWindowSize: STREAM_WINDOW,
  maxConcurrentStreams: MAX_TUNNEL_STREAMS,
  enablePush: false,
};

/** `socket` with `head` (bytes read past the upgrade's headers) put back in front of what it still delivers. */
class PrependedSocket extends Duplex {
  readonly #socket: Duplex;

  constructor(socket: Duplex, head: Buffer) {
    super();
    this.#socket = socket;
    this.push(head);
    socket.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.once("end", () => this.push(null));
    socket.once("error", (error) => this.destroy(error));
    socket.once("close", () => this.destroy());
  }

  override _read(): void {
    this.#socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#socket.write(chunk, done);
  }

  override _final(done: (error?: Error | null) => void): void {
    this.#socket.end(done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.#socket.destroy(error ?? undefined);
    done(error);
  }
}

/** The stream HTTP/2 runs on: the socket itself, or with `head` put back in front. */
export function http2Transport(socket: Duplex, head: Buffer): Duplex {
  return head.length === 0 ? socket : new PrependedSocket(socket, head);
}

/** A long-lived connection: no idle timeout of the HTTP server's, keep-alive probes, no Nagle delay. */
function keepOpen(socket: Duplex): void {
  const net = socket as Partial<Socket>;
  net.setTimeout?.(0);
  net.setNoDelay?.(true);
  net.setKeepAlive?.(true, 30_000);
}

/**
 * Platform side: answers the upgrade with 101 (plus `headers`) and returns the HTTP/2 client session on the socket.
 * The session starts only once the 101 is written: HTTP/2 must not take over a socket with a write in flight.
 */
export function acceptTunnel(
  socket: Duplex,
  head: Buffer,
  headers: Record<string, string>,
): Promise<ClientHttp2Session> {
  keepOpen(socket);
  const lines = [
    "HTTP/1.1 101 Switching Protocols",
    "Connection: Upgrade",
    `Upgrade: ${TUNNEL_PROTOCOL}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return new Promise((resolve, reject) => {
    socket.write(`${lines.join("\r\n")}\r\n\r\n`, (error) => {
      if (error) return reject(error);
      const transport = http2Transport(socket, head);
      const session = http2Connect("http://agent.tunnel", {
        createConnection: () => transport,
        settings: SETTINGS,
      });
      session.setLocalWindowSize(CONNECTION_WINDOW);
      resolve(session);
    });
  });
}

export interface DialOptions {
  /** The platform's tunnel address, e.g. https://platform.example.com/cluster-agent/prod/tunnel. */
  url: string;
  /** PEM of the CA the platform's serving certificate chains to (default: the system's). */
  ca?: string;
  insecure?: boolean;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  /** How long the handshake may take. */
  timeoutMs: number;
}

/** The platform refused the tunnel: its HTTP status and the message of its Status. */
export class TunnelRefusedError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "TunnelRefusedError";
    this.code = code;
  }
}

/** Agent side: dials the platform and returns the HTTP/2 server session on the upgraded connection. */
export function dialTunnel(
  options: DialOptions,
): Promise<{ session: ServerHttp2Session; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(options.url, {
      method: "GET",
      agent: false,
      ca: options.ca,
      rejectUnauthorized: !options.insecure,
      headers: {
        connection: "Upgrade",
        upgrade: TUNNEL_PROTOCOL,
        authorization: `Bearer ${options.token}`,
      },
    });
    request.setTimeout(options.timeoutMs, () =>
      request.destroy(new Error(`no answer within ${Math.round(options.timeoutMs / 1000)} s`)),
    );
    request.once("upgrade", (response, socket, head) => {
      request.setTimeout(0);
      if (response.headers.upgrade !== TUNNEL_PROTOCOL) {
        socket.destroy();
        return reject(new Error(`the platform switched to "${response.headers.upgrade}", not ${TUNNEL_PROTOCOL}`));
      }
      keepOpen(socket);
      const session = performServerHandshake(http2Transport(socket, head), { settings: SETTINGS });
      session.setLocalWindowSize(CONNECTION_WINDOW);
      resolve({ session, headers: response.headers });
    });
    request.once("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => {
        if (chunks.length < 64) chunks.push(chunk);
      });
      response.once("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let message = body.slice(0, 500);
        try {
          message = (JSON.parse(body) as { message?: string }).message ?? message;
        } catch {
          // not a Status
        }
        reject(new TunnelRefusedError(response.statusCode ?? 0, message || `answered ${response.statusCode}`));
      });
    });
    request.once("error", reject);
    request.end();
  });
}
