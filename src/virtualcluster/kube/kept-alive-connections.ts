// Kept-alive HTTP/1.1 connections to one API server for whole request/answer exchanges (KubeHttp.request): the
// request head and body written as one string, the answer read by response-parser.ts and returned whole. Node's
// https.request with a keep-alive Agent costs the client about three times as much per request (a ClientRequest, an
// IncomingMessage stream, the Agent's bookkeeping, several ticks), the largest part of the syncer's own CPU per
// synced object (BENCHMARKS.md, sync burst). Watches still stream through https.request.
//
// A connection carries one request at a time (no pipelining: a Go API server answers a connection's requests one
// after another, so pipelining would serialise writes that run side by side today) and goes back to the idle list
// only once its answer was read whole and the server did not ask to close it; one that failed, timed out or sent
// bytes out of turn is destroyed. Idle connections are closed before the server's keep-alive timeout (its
// `Keep-Alive: timeout=` hint, else IDLE_MS), so a request rarely meets a connection the server is closing; a GET or
// HEAD that does (no byte of answer on a reused connection) is sent once more on a new one. Other methods are never
// sent twice: the caller sees the error, as with https.request.

import type { OutgoingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import { http } from "../../utils/node-http.ts";
import { type ResponseHeaders, ResponseParser } from "./response-parser.ts";

export interface Answer {
  status: number;
  headers: ResponseHeaders;
  body: Buffer;
}

export interface ExchangeOptions {
  /** The request head from requestHead(). */
  head: string;
  body?: string;
  /** The whole exchange must end in this time, or it fails with code ETIMEDOUT (0: no deadline). */
  timeoutMs: number;
  /** A longer answer fails the exchange (its connection is closed). */
  maxBodyBytes: number;
}

/** Idle connections kept at most this long when the server names no keep-alive timeout. */
const IDLE_MS = 4_000;
const MAX_IDLE = 64;
const SWEEP_MS = 500;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Node's ClientRequest refuses in a path too: control characters, spaces and anything above Latin-1. */
const INVALID_PATH = /[^\u0021-\u00ff]/;
const KEEP_ALIVE_TIMEOUT = /(?:^|,)\s*timeout=(\d{1,6})\b/i;

/** The request head, every name and value checked as Node checks them (no CR/LF smuggled into the head). */
export function requestHead(method: string, path: string, host: string, headers: OutgoingHttpHeaders): string {
  if (!TOKEN.test(method)) throw new TypeError(`invalid method ${JSON.stringify(method)}`);
  if (INVALID_PATH.test(path)) throw new TypeError("the request path contains unescaped characters");
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    http.validateHeaderName(name);
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = String(item);
      http.validateHeaderValue(name, text);
      head += `${name}: ${text}\r\n`;
    }
  }
  return `${head}\r\n`;
}

/** An answer longer than the exchange's maxBodyBytes: the exchange failed, its connection was closed. */
export class AnswerTooLongError extends Error {}

const hangUp = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });

/** How an exchange ended: its whole answer (and whether the connection may carry another), or an error. */
type Outcome = { answer: Answer; reusable: boolean } | { error: Error; started: boolean };

/** One request's answer as it arrives: parsed, bounded, settled once (whole, or failed). */
class Exchange {
  readonly options: ExchangeOptions;
  /** performance.now() past which it fails with ETIMEDOUT (0: never). */
  readonly deadline: number;
  readonly #parser: ResponseParser;
  readonly #settle: (outcome: Outcome) => void;
  #head: { status: number; headers: ResponseHeaders } | undefined;
  /** Set by the parser when the answer is whole; acted on once the bytes read so far are parsed. */
  #ended: { reusable: boolean } | undefined;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  #settled = false;

  constructor(method: string, options: ExchangeOptions, settle: (outcome: Outcome) => void) {
    this.options = options;
    this.deadline = options.timeoutMs > 0 ? performance.now() + options.timeoutMs : 0;
    this.#settle = settle;
    this.#parser = new ResponseParser(method, {
      head: (head) => {
        this.#head = head;
      },
      body: (chunk) => {
        this.#bytes += chunk.length;
        if (this.#bytes > options.maxBodyBytes)
          throw new AnswerTooLongError(`the answer is longer than ${options.maxBodyBytes} bytes`);
        this.#chunks.push(chunk);
      },
      end: (reusable) => {
        this.#ended = { reusable };
      },
    });
  }

  data(chunk: Buffer): void {
    this.#parse(() => this.#parser.execute(chunk));
  }

  /** The server ended the connection: before any answer a hang-up, as Node's client says; else the parser decides. */
  end(): void {
    if (this.#parser.started) this.#parse(() => this.#parser.finish());
    else this.fail(hangUp());
  }

  fail(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle({ error, started: this.#parser.started });
  }

  /** Feeds the parser; an answer whole before an error (stray bytes after it) is delivered, its connection not kept. */
  #parse(step: () => void): void {
    if (this.#settled) return;
    let reusable: boolean;
    try {
      step();
      if (!this.#ended) return;
      reusable = this.#ended.reusable;
    } catch (error) {
      if (!this.#ended) {
        this.fail(error as Error);
        return;
      }
      reusable = false;
    }
    this.#settled = true;
    const body = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks);
    this.#settle({ answer: { status: this.#head?.status ?? 0, headers: this.#head?.headers ?? {}, body }, reusable });
  }
}

/** A socket and the exchange it carries; its listeners stay for its life and hand events to that exchange. */
class Connection {
  readonly socket: Socket;
  current: Exchange | undefined;
  /** While idle: performance.now() after which it is not used again. */
  idleUntil = 0;

  constructor(socket: Socket, gone: (connection: Connection) => void) {
    this.socket = socket;
    // Bytes or an end while idle are out of turn: the connection is closed (and then gone).
    socket.on("data", (chunk: Buffer) => (this.current ? this.current.data(chunk) : socket.destroy()));
    socket.on("end", () => (this.current ? this.current.end() : socket.destroy()));
    socket.on("error", (error) => this.current?.fail(error)); // "close" follows
    socket.on("close", () => {
      this.current?.fail(hangUp());
      gone(this);
    });
  }
}

export class KeptAliveConnections {
  readonly #connect: () => Socket;
  /** Idle connections, the most recently freed last. */
  readonly #idle: Connection[] = [];
  /** Exchanges with a deadline, swept by one timer instead of a timer armed per request. */
  readonly #inFlight = new Set<Exchange>();
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;

  /** `connect`: a new connection to the server (TLS with the server's settings). */
  constructor(connect: () => Socket) {
    this.#connect = connect;
  }

  /** Sends one request and reads its whole answer. */
  exchange(method: string, options: ExchangeOptions): Promise<Answer> {
    return new Promise((resolve, reject) => this.#send(method, options, true, resolve, reject));
  }

  /** Closes the idle connections; requests in flight finish on theirs, which are then closed. */
  close(): void {
    this.#closed = true;
    for (const connection of this.#idle.splice(0)) connection.socket.destroy();
  }

  #send(
    method: string,
    options: ExchangeOptions,
    mayRetry: boolean,
    resolve: (answer: Answer) => void,
    reject: (error: Error) => void,
  ): void {
    let connection = this.#takeIdle();
    const reused = connection !== undefined;
    try {
      connection ??= new Connection(this.#connect(), (gone) => this.#forget(gone));
    } catch (error) {
      reject(error as Error);
      return;
    }
    const carrier = connection;
    const exchange = new Exchange(method, options, (outcome) => {
      carrier.current = undefined;
      this.#inFlight.delete(exchange);
      if ("answer" in outcome) {
        if (outcome.reusable) this.#release(carrier, keepAliveMs(outcome.answer.headers));
        else carrier.socket.destroy();
        resolve(outcome.answer);
        return;
      }
      carrier.socket.destroy();
      // A kept-alive connection the server closed as this was sent: a GET or HEAD goes once more on a new one.
      if (reused && mayRetry && !outcome.started && (method === "GET" || method === "HEAD")) {
        this.#send(method, options, false, resolve, reject);
      } else reject(outcome.error);
    });
    carrier.current = exchange;
    if (exchange.deadline) this.#watch(exchange);
    carrier.socket.write(options.body === undefined ? options.head : options.head + options.body);
  }

  /** The most recently freed idle connection still within its keep-alive time. */
  #takeIdle(): Connection | undefined {
    const now = performance.now();
    for (let connection = this.#idle.pop(); connection; connection = this.#idle.pop()) {
      if (connection.idleUntil > now && !connection.socket.destroyed) {
        connection.socket.ref();
        return connection;
      }
      connection.socket.destroy();
    }
    return undefined;
  }

  /** Keeps a connection whose answer was read whole for the next request, until it idles out or the server closes. */
  #release(connection: Connection, keepAliveMs: number): void {
    if (this.#closed || this.#idle.length >= MAX_IDLE || connection.socket.destroyed) {
      connection.socket.destroy();
      return;
    }
    connection.socket.unref(); // an idle connection keeps no process alive
    connection.idleUntil = performance.now() + keepAliveMs;
    this.#idle.push(connection);
    this.#arm();
  }

  /** A closed connection leaves the idle list. */
  #forget(connection: Connection): void {
    const at = this.#idle.indexOf(connection);
    if (at !== -1) this.#idle.splice(at, 1);
  }

  #watch(exchange: Exchange): void {
    this.#inFlight.add(exchange);
    this.#arm();
  }

  #arm(): void {
    this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_MS).unref();
  }

  /** Fails exchanges past their deadline and closes connections idle past their keep-alive time. */
  #sweep(): void {
    const now = performance.now();
    for (const exchange of this.#inFlight) {
      if (exchange.deadline > now) continue;
      this.#inFlight.delete(exchange);
      exchange.fail(Object.assign(new Error(`no answer in ${exchange.options.timeoutMs} ms`), { code: "ETIMEDOUT" }));
    }
    for (const connection of this.#idle) if (connection.idleUntil <= now) connection.socket.destroy();
    if (this.#inFlight.size === 0 && this.#idle.length === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}

/** How long a connection may idle: a second less than the server's `Keep-Alive: timeout=`, at most IDLE_MS. */
function keepAliveMs(headers: ResponseHeaders | undefined): number {
  const hint = KEEP_ALIVE_TIMEOUT.exec(String(headers?.["keep-alive"] ?? ""));
  return hint ? Math.min(IDLE_MS, Number(hint[1]) * 1000 - 1000) : IDLE_MS;
}
