// Unary calls to one etcd member's HTTP/JSON gateway over kept-alive HTTP/1.1 connections of our own: a request is
// one write of a prepared head and its body, the answer is read straight off the socket. Node's http client spends
// about 100 µs of CPU per call on what the gateway never needs (header checks, agent bookkeeping, message streams,
// per-request listeners); a platform on etcd makes one such call per write, so that was a good part of its CPU.
// Streams (watch, lease keep-alive) stay on node:http (see etcd-client.ts): they are few and long.

import net from "node:net";
import tls from "node:tls";

export interface GatewayTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface GatewayConnectionsOptions {
  /** The member's client URL (http: or https:). */
  url: URL;
  tls?: GatewayTls;
  /** Connections kept at most; further calls wait for one to be free. */
  maxSockets: number;
}

export interface GatewayAnswer {
  status: number;
  body: string;
}

/** Heads longer than this are not an etcd gateway's. */
const MAX_HEAD = 64 * 1024;
const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

interface Exchange {
  head: string;
  body: string;
  resolve(answer: GatewayAnswer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  connection?: Connection;
}

interface Connection {
  socket: net.Socket;
  reader: AnswerReader;
  exchange?: Exchange;
}

export class GatewayConnections {
  private readonly url: URL;
  private readonly tls?: GatewayTls;
  private readonly maxSockets: number;
  private readonly hostHeader: string;
  private readonly all = new Set<Connection>();
  private readonly idle: Connection[] = [];
  private readonly queue: Exchange[] = [];
  private destroyed = false;

  constructor(options: GatewayConnectionsOptions) {
    this.url = options.url;
    this.tls = options.tls;
    this.maxSockets = Math.max(1, options.maxSockets);
    this.hostHeader = options.url.host;
  }

  /** The connections open now, busy or idle (one the server closed counts until its close event). */
  get openConnections(): number {
    return this.all.size;
  }

  /** POSTs `body` (JSON) to `path`; rejects on a transport failure or after `timeoutMs`. */
  post(path: string, body: string, timeoutMs: number): Promise<GatewayAnswer> {
    if (this.destroyed) return Promise.reject(new Error(`connections to ${this.hostHeader} are closed`));
    return new Promise((resolve, reject) => {
      const exchange: Exchange = {
        head:
          `POST ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nContent-Type: application/json\r\n` +
          // Members that lost their leader refuse at once instead of waiting for an election.
          `Grpc-Metadata-Hasleader: true\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
        body,
        resolve,
        reject,
        timer: setTimeout(() => this.timedOut(exchange, timeoutMs), timeoutMs),
      };
      const connection = this.idle.pop() ?? (this.all.size < this.maxSockets ? this.connect() : undefined);
      if (connection) this.send(connection, exchange);
      else this.queue.push(exchange);
    });
  }

  /** Ends every connection; calls under way or waiting fail. */
  destroy(): void {
    this.destroyed = true;
    for (const exchange of this.queue.splice(0))
      this.fail(exchange, new Error(`connections to ${this.hostHeader} are closed`));
    for (const connection of [...this.all]) connection.socket.destroy();
  }

  private connect(): Connection {
    const port = Number(this.url.port) || (this.url.protocol === "https:" ? 443 : 80);
    const host = this.url.hostname.replace(/^\[|\]$/g, "");
    const socket =
      this.url.protocol === "https:"
        ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ...this.tls })
        : net.connect({ host, port });
    socket.setNoDelay(true);
    const connection: Connection = { socket, reader: new AnswerReader() };
    this.all.add(connection);
    socket.on("data", (chunk: Buffer) => this.received(connection, chunk));
    socket.on("end", () => this.closed(connection, new Error(`${this.hostHeader} closed the connection`)));
    socket.on("error", (error) => this.closed(connection, error));
    socket.on("close", () => this.closed(connection, new Error(`${this.hostHeader} closed the connection`)));
    return connection;
  }

  private send(connection: Connection, exchange: Exchange): void {
    connection.exchange = exchange;
    exchange.connection = connection;
    connection.reader.reset();
    connection.socket.ref();
    connection.socket.write(exchange.head + exchange.body);
  }

  private received(connection: Connection, chunk: Buffer): void {
    const exchange = connection.exchange;
    if (!exchange) {
      connection.socket.destroy(); // an answer nobody asked for: the connection is out of step
      return;
    }
    let done: boolean;
    try {
      done = connection.reader.push(chunk);
    } catch (error) {
      connection.socket.destroy(error as Error);
      return;
    }
    if (!done) return;
    connection.exchange = undefined;
    clearTimeout(exchange.timer);
    const { status, body, keepAlive } = connection.reader;
    if (keepAlive && !this.destroyed) this.release(connection);
    else connection.socket.destroy();
    exchange.resolve({ status, body });
  }

  /** A connection free again: the next waiting call, or the idle list (where it does not hold the process open). */
  private release(connection: Connection): void {
    const next = this.queue.shift();
    if (next) {
      this.send(connection, next);
      return;
    }
    connection.socket.unref();
    this.idle.push(connection);
  }

  private closed(connection: Connection, error: Error): void {
    if (!this.all.delete(connection)) return;
    connection.socket.destroy();
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    const exchange = connection.exchange;
    connection.exchange = undefined;
    if (exchange && connection.reader.end()) {
      clearTimeout(exchange.timer);
      exchange.resolve({ status: connection.reader.status, body: connection.reader.body });
    } else if (exchange) this.fail(exchange, error);
    // A call waiting for a free connection gets a new one.
    const next = this.queue.shift();
    if (next && !this.destroyed) this.send(this.connect(), next);
  }

  private timedOut(exchange: Exchange, timeoutMs: number): void {
    const error = new Error(`no answer from ${this.hostHeader} in ${timeoutMs} ms`);
    if (exchange.connection) {
      exchange.connection.socket.destroy(error);
      return;
    }
    const at = this.queue.indexOf(exchange);
    if (at >= 0) this.queue.splice(at, 1);
    exchange.reject(error);
  }

  private fail(exchange: Exchange, error: Error): void {
    clearTimeout(exchange.timer);
    exchange.reject(error);
  }
}

/**
 * One HTTP/1.1 answer read off a socket, chunk by chunk: the status, the body (Content-Length or chunked), and
 * whether the connection stays open. Throws on what is not HTTP.
 */
export class AnswerReader {
  status = 0;
  keepAlive = true;
  body = "";
  private state: "head" | "length" | "size" | "data" | "data-end" | "trailer" | "until-close" | "done" = "head";
  private pending: Buffer = Buffer.alloc(0);
  private remaining = 0;
  private parts: Buffer[] = [];

  reset(): void {
    this.status = 0;
    this.keepAlive = true;
    this.body = "";
    this.state = "head";
    this.pending = Buffer.alloc(0);
    this.remaining = 0;
    this.parts = [];
  }

  /** Takes the next bytes; true once the answer is complete (its body is then in `body`). */
  push(chunk: Buffer): boolean {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    let at = 0;
    while (this.state !== "done") {
      if (this.state === "head") {
        const end = data.indexOf(HEAD_END, at);
        if (end < 0) {
          if (data.length - at > MAX_HEAD) throw new Error("etcd's answer has no end of headers");
          this.pending = data.subarray(at);
          return false;
        }
        this.head(data.toString("latin1", at, end));
        at = end + HEAD_END.length;
      } else if (this.state === "length" || this.state === "data" || this.state === "until-close") {
        const take = this.state === "until-close" ? data.length - at : Math.min(this.remaining, data.length - at);
        if (take > 0) this.parts.push(data.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.state === "until-close" || this.remaining > 0) return false;
        this.state = this.state === "length" ? "done" : "data-end";
      } else {
        // size line, the CRLF after a chunk's data, or a trailer line: all end with CRLF.
        const end = data.indexOf(CRLF, at);
        if (end < 0) {
          if (data.length - at > MAX_HEAD) throw new Error("etcd's answer has a line without end");
          this.pending = data.subarray(at);
          return false;
        }
        const line = data.toString("latin1", at, end);
        at = end + CRLF.length;
        if (this.state === "size") {
          const size = Number.parseInt(line.split(";", 1)[0].trim(), 16);
          if (!Number.isFinite(size) || size < 0) throw new Error(`etcd's answer has a bad chunk size "${line}"`);
          this.remaining = size;
          this.state = size === 0 ? "trailer" : "data";
        } else if (this.state === "data-end") {
          if (line !== "") throw new Error("etcd's answer has a chunk longer than it said");
          this.state = "size";
        } else if (line === "") this.state = "done";
      }
    }
    this.body = this.parts.length === 1 ? this.parts[0].toString("utf8") : Buffer.concat(this.parts).toString("utf8");
    this.parts = [];
    return true;
  }

  /** The answer read to the end of the stream (a server that closes to end it, with neither length nor chunks). */
  end(): boolean {
    if (this.state !== "until-close") return false;
    this.state = "done";
    this.body = Buffer.concat(this.parts).toString("utf8");
    return true;
  }

  private head(text: string): void {
    const lines = text.split("\r\n");
    const status = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0]);
    if (!status) throw new Error(`etcd answered something that is not HTTP/1: "${lines[0].slice(0, 80)}"`);
    this.status = Number(status[2]);
    let length: number | undefined;
    let chunked = false;
    let connection = "";
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(":");
      if (colon <= 0) continue;
      const name = lines[i].slice(0, colon).trim().toLowerCase();
      const value = lines[i].slice(colon + 1).trim();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") chunked = value.toLowerCase().includes("chunked");
      else if (name === "connection") connection = value.toLowerCase();
    }
    this.keepAlive = status[1] === "1" ? connection !== "close" : connection === "keep-alive";
    if (this.status < 200 || this.status === 204 || this.status === 304) this.state = "done";
    else if (chunked) this.state = "size";
    else if (length !== undefined && Number.isInteger(length) && length >= 0) {
      this.remaining = length;
      this.state = length === 0 ? "done" : "length";
    } else {
      this.keepAlive = false;
      this.state = "until-close";
    }
  }
}
