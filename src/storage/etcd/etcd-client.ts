// A small client for etcd's v3 HTTP/JSON gateway (served by every etcd member on its client URL): unary calls
// (range, txn, compaction, leases) with fail-over across endpoints, over connections of our own
// (gateway-connections.ts), and streaming calls (watch, lease keep-alive) read as JSON lines. Why the gateway and
// not a gRPC client: no dependency (no generated protobuf, no gRPC stack), and the watch resume point stays ours
// (see etcd-watch-stream.ts), which is what "no event lost or repeated across a member's death" rests on. Keys and
// values travel as base64, 64-bit integers as strings, defaults are omitted.

import type { ClientRequest, IncomingMessage } from "node:http";
import https from "node:https";
import { http } from "../../utils/node-http.ts";
import { StorageError } from "../types.ts";
import { GatewayConnections } from "./gateway-connections.ts";

export interface EtcdTls {
  /** PEM of the CA that signed the members' serving certificates (--etcd-cafile). */
  ca?: string;
  /** Client certificate and key for mutual TLS (--etcd-certfile, --etcd-keyfile). */
  cert?: string;
  key?: string;
}

export interface EtcdClientOptions {
  /** Client URLs of the members, e.g. ["https://10.0.0.1:2379", ...]. */
  endpoints: string[];
  tls?: EtcdTls;
  /** How long one call may take across all endpoints before it fails with Unavailable (default 5 s). */
  requestTimeoutMs?: number;
  /** Sockets kept per endpoint (default 64). */
  maxSockets?: number;
}

/** An etcd response header: the revision is the store's revision when the call was answered. */
export interface EtcdHeader {
  revision?: string;
  member_id?: string;
  raft_term?: string;
}

export interface EtcdKeyValue {
  key: string;
  value?: string;
  create_revision?: string;
  mod_revision?: string;
  version?: string;
  lease?: string;
}

/** An error etcd answered (not a transport failure): `code` is the gRPC status code. */
export class EtcdResponseError extends Error {
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.name = "EtcdResponseError";
    this.code = code;
  }
}

/** gRPC codes and messages after which another member (or a later try) may succeed. */
const RETRYABLE_CODES = new Set([4, 14]); // DeadlineExceeded, Unavailable
const RETRYABLE_MESSAGES = /no leader|leader changed|timed out|too many requests|not capable|stopped|unhealthy cluster/;

export function isRetryable(error: unknown): boolean {
  if (error instanceof EtcdResponseError) {
    return RETRYABLE_CODES.has(error.code) || RETRYABLE_MESSAGES.test(error.message);
  }
  return true; // a transport failure: refused, reset, timed out
}

export interface CallOptions {
  /** Overrides the client's request timeout for this call. */
  timeoutMs?: number;
  /** Set to ambiguous when a failed try may have been applied before the call was tried again. */
  attempt?: { ambiguous: boolean };
}

/** A try that cannot have reached etcd's log: refused connection, or a member without a leader refusing it. */
function surelyNotApplied(error: unknown): boolean {
  if (error instanceof EtcdResponseError) return /no leader|not capable/.test(error.message);
  return (error as NodeJS.ErrnoException).code === "ECONNREFUSED";
}

export const toBase64 = (text: string | Uint8Array): string => Buffer.from(text).toString("base64");
export const fromBase64 = (text: string | undefined): string =>
  text ? Buffer.from(text, "base64").toString("utf8") : "";

/** Streams of JSON lines: `onMessage` for each `result`, `onEnd` once with the reason it ended. */
export interface EtcdStreamHandlers {
  onMessage(message: Record<string, unknown>): void;
  onEnd(error?: Error): void;
}

export interface EtcdStream {
  pause(): void;
  resume(): void;
  close(): void;
}

export class EtcdClient {
  readonly endpoints: URL[];
  /** Per endpoint: the connections unary calls go over. */
  private readonly connections: GatewayConnections[];
  private readonly tls?: EtcdTls;
  private readonly timeoutMs: number;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly streams = new Set<ClientRequest>();
  /** The endpoint that answered last: tried first next time. */
  private preferred = 0;
  private closed = false;

  constructor(options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new Error("etcd: at least one endpoint is needed");
    this.endpoints = options.endpoints.map((endpoint) => {
      const url = new URL(endpoint);
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new Error(`etcd endpoint ${endpoint} is not an http:// or https:// URL`);
      }
      return url;
    });
    this.timeoutMs = options.requestTimeoutMs ?? 5_000;
    const maxSockets = options.maxSockets ?? 64;
    this.tls = options.tls;
    this.connections = this.endpoints.map((url) => new GatewayConnections({ url, tls: options.tls, maxSockets }));
  }

  /**
   * One unary call. Transport failures and "no leader"-like answers move on to the next endpoint until the timeout;
   * a write whose answer was lost may have been applied (callers of txn handle that, see etcd-store.ts).
   */
  call<T = Record<string, unknown>>(path: string, body: unknown, options: CallOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new StorageError("Closed", "storage is closed"));
    const run = this.callWithFailover<T>(path, JSON.stringify(body), options);
    this.inFlight.add(run);
    const forget = () => this.inFlight.delete(run);
    run.then(forget, forget);
    return run;
  }

  /** Opens a streaming call on one endpoint (the preferred one, or `endpointIndex`). */
  stream(path: string, body: unknown, handlers: EtcdStreamHandlers, endpointIndex = this.preferred): EtcdStream {
    const index = endpointIndex % this.endpoints.length;
    const url = this.endpoints[index];
    const transport = url.protocol === "https:" ? https : http;
    let ended = false;
    const end = (error?: Error) => {
      if (ended) return;
      ended = true;
      this.streams.delete(request);
      handlers.onEnd(error);
    };
    const request = transport.request(new URL(path, url), {
      method: "POST",
      agent: false, // a stream holds its socket for its whole life: not one of the pooled ones
      ...(url.protocol === "https:" ? this.tlsOf() : {}),
      headers: { "content-type": "application/json", "grpc-metadata-hasleader": "true" },
    });
    let response: IncomingMessage | undefined;
    let paused = false;
    request.on("response", (res) => {
      response = res;
      if (paused) res.pause();
      if (res.statusCode !== 200) {
        readAll(res).then(
          (text) => end(answerError(res.statusCode ?? 0, text)),
          (error: Error) => end(error),
        );
        return;
      }
      let buffered = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffered += chunk;
        let newline = buffered.indexOf("\n");
        while (newline >= 0 && !ended) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line) {
            let parsed: { result?: Record<string, unknown>; error?: { message?: string; code?: number } };
            try {
              parsed = JSON.parse(line);
            } catch {
              end(new Error(`etcd sent a line that is not JSON on ${path}`));
              request.destroy();
              return;
            }
            if (parsed.error) {
              end(new EtcdResponseError(parsed.error.message ?? "etcd stream error", parsed.error.code ?? 2));
              request.destroy();
              return;
            }
            if (parsed.result) handlers.onMessage(parsed.result);
          }
          newline = buffered.indexOf("\n");
        }
      });
      res.on("end", () => end(new Error(`etcd ended the stream ${path}`)));
      res.on("error", (error) => end(error));
    });
    request.on("error", (error) => end(error));
    request.end(JSON.stringify(body));
    this.streams.add(request);
    return {
      pause: () => {
        paused = true;
        response?.pause();
      },
      resume: () => {
        paused = false;
        response?.resume();
      },
      close: () => {
        ended = true;
        this.streams.delete(request);
        request.destroy();
      },
    };
  }

  /** Lets calls already made finish, then ends every stream and socket; later calls fail with Closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    for (const request of this.streams) request.destroy();
    this.streams.clear();
    for (const connections of this.connections) connections.destroy();
  }

  private tlsOf(): https.RequestOptions {
    const { ca, cert, key } = this.tls ?? {};
    return { ca, cert, key };
  }

  private async callWithFailover<T>(path: string, body: string, options: CallOptions): Promise<T> {
    const total = options.timeoutMs ?? this.timeoutMs;
    const deadline = Date.now() + total;
    // One try may not take the whole budget: a member whose leader just died can hold a request until its own
    // timeout, while another member (or the same one, once an election is over) answers at once.
    const perTry = Math.max(500, Math.floor(total / 3));
    let lastError: unknown;
    for (let attempt = 0; ; attempt++) {
      const index = (this.preferred + attempt) % this.endpoints.length;
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const answer = await this.post<T>(index, path, body, Math.min(left, perTry));
        this.preferred = index;
        return answer;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        if (options.attempt && !surelyNotApplied(error)) options.attempt.ambiguous = true;
        lastError = error;
        // Every endpoint failed once: wait a little (an election takes about a second) before the next round.
        if ((attempt + 1) % this.endpoints.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(0, deadline - Date.now()))));
        }
      }
    }
    const reason = lastError instanceof Error ? lastError.message : String(lastError ?? "no answer");
    throw new StorageError(
      "Unavailable",
      `etcd is unavailable (${this.endpoints.map((u) => u.host).join(", ")}): ${reason}`,
    );
  }

  private async post<T>(index: number, path: string, body: string, timeoutMs: number): Promise<T> {
    const { status, body: text } = await this.connections[index].post(path, body, timeoutMs);
    if (status !== 200) throw answerError(status, text);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new Error(`etcd ${this.endpoints[index].host} answered ${path} with something that is not JSON`);
    }
  }
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => chunks.push(chunk));
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.on("error", reject);
  });
}

function answerError(status: number, text: string): Error {
  try {
    const parsed = JSON.parse(text) as { message?: string; error?: string; code?: number };
    return new EtcdResponseError(parsed.message ?? parsed.error ?? `HTTP ${status}`, parsed.code ?? 2);
  } catch {
    return new EtcdResponseError(`HTTP ${status}: ${text.slice(0, 200)}`, status >= 500 ? 14 : 2);
  }
}
