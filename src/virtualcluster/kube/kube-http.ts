// JSON requests and watch streams against a Kubernetes API server over one keep-alive pool. Objects stay plain
// JSON (one JSON.parse per response or watch line), which is all the syncer and the platform connection need.

import type { ClientRequest, IncomingMessage, RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { http } from "../../utils/node-http.ts";
import { KeptAliveConnections, requestHead } from "./kept-alive-connections.ts";
import type { KubeAccess } from "./kube-access.ts";
import { KubeApiError } from "./kube-api-error.ts";

export type Query = Record<string, string | number | boolean | undefined>;

export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path below the server's base URL, e.g. `/api/v1/namespaces/default/services`. */
  path: string;
  query?: Query;
  body?: unknown;
  /** Content type of the body (default application/json; patches name theirs). */
  contentType?: string;
}

export interface WatchEvent {
  type: string;
  object: Record<string, unknown>;
}

export interface WatchRequest {
  path: string;
  query: Query;
  onEvent(event: WatchEvent): void;
  /** Ends the watch (the promise then resolves). */
  signal?: AbortSignal;
}

/** Requests that get no answer in this time fail (a hung connection must not stall a sync worker forever). */
const DEFAULT_TIMEOUT_MS = 60_000;
/** An answer longer than this fails its request (a list is read in pages far below it). */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;
/** A watch ends on the server's timeoutSeconds; this much longer without a byte and the client gives up. */
const WATCH_SLACK_MS = 30_000;

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

export interface KubeHttpOptions {
  timeoutMs?: number;
  userAgent?: string;
}

/**
 * Deadlines of requests in flight (the whole exchange), checked twice a second by one timer instead of a socket
 * timeout armed and disarmed for every request of a sync burst.
 */
class Deadlines {
  readonly #requests = new Map<ClientRequest, { at: number; ms: number }>();
  #timer: NodeJS.Timeout | undefined;

  add(request: ClientRequest, ms: number): void {
    this.#requests.set(request, { at: performance.now() + ms, ms });
    request.once("close", () => this.#requests.delete(request));
    this.#timer ??= setInterval(() => this.#sweep(), 500).unref();
  }

  #sweep(): void {
    const now = performance.now();
    for (const [request, { at, ms }] of this.#requests) {
      if (at > now) continue;
      this.#requests.delete(request);
      request.destroy(Object.assign(new Error(`no answer in ${ms} ms`), { code: "ETIMEDOUT" }));
    }
    if (this.#requests.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

export class KubeHttp {
  readonly access: KubeAccess;
  readonly #base: URL;
  readonly #hostname: string;
  readonly #pathPrefix: string;
  readonly #send: typeof httpsRequest;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #deadlines = new Deadlines();
  /** Requests' own connections where the access has plain ones (not through a proxy or client-node). */
  readonly #connections: KeptAliveConnections | undefined;
  readonly #hostHeader: string;

  constructor(access: KubeAccess, options: KubeHttpOptions = {}) {
    this.access = access;
    this.#base = new URL(access.server);
    this.#hostname = this.#base.hostname.replace(/^\[|\]$/g, "");
    this.#pathPrefix = this.#base.pathname.replace(/\/+$/, "");
    this.#send = this.#base.protocol === "http:" ? http.request : httpsRequest;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#userAgent = options.userAgent ?? "virtualcluster";
    this.#connections = access.connect ? new KeptAliveConnections(access.connect) : undefined;
    this.#hostHeader = this.#base.host;
  }

  /** One request; resolves with the parsed JSON answer, rejects with KubeApiError on an HTTP error status. */
  async request<T = Record<string, unknown>>(request: KubeRequest): Promise<T> {
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (this.#connections) return this.#exchange<T>(this.#connections, request, body);
    const response = await this.#open(request.method, request.path, request.query, this.#timeoutMs, {
      body,
      contentType: request.contentType,
    });
    return decodeAnswer<T>(response.statusCode ?? 0, await readText(response));
  }

  /**
   * Streams a watch: resolves when the server ends it (its timeout) or the signal aborts it; rejects on a
   * connection error or an HTTP error status. Events arrive in order, one parsed line each.
   */
  async watch(watch: WatchRequest): Promise<void> {
    const timeoutSeconds = Number(watch.query.timeoutSeconds ?? 0);
    const idleMs = timeoutSeconds > 0 ? timeoutSeconds * 1000 + WATCH_SLACK_MS : 0;
    const response = await this.#open("GET", watch.path, { ...watch.query, watch: true }, idleMs, {
      signal: watch.signal,
      stream: true,
    });
    const status = response.statusCode ?? 0;
    if (status >= 400) throw KubeApiError.fromResponse(status, await readText(response));
    await new Promise<void>((resolve, reject) => {
      let pending = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        pending += chunk;
        let end = pending.indexOf("\n");
        while (end >= 0) {
          const line = pending.slice(0, end);
          pending = pending.slice(end + 1);
          if (line.trim()) {
            try {
              watch.onEvent(JSON.parse(line) as WatchEvent);
            } catch (error) {
              response.destroy(error as Error);
              return;
            }
          }
          end = pending.indexOf("\n");
        }
      });
      response.once("end", () => resolve());
      response.once("error", (error) => (watch.signal?.aborted ? resolve() : reject(error)));
      response.once("close", () => resolve());
    });
  }

  close(): void {
    this.#connections?.close();
    this.access.close();
  }

  /** request() over the kept-alive connections: the same headers as #open() sends, the answer read whole. */
  async #exchange<T>(connections: KeptAliveConnections, request: KubeRequest, body: string | undefined): Promise<T> {
    const options = await this.access.requestOptions();
    const headers = this.#headers(options, body, request.contentType);
    const path = `${this.#pathPrefix}${request.path}${queryString(request.query)}`;
    const answer = await connections.exchange(request.method, {
      head: requestHead(request.method, path, this.#hostHeader, headers),
      body,
      timeoutMs: this.#timeoutMs,
      maxBodyBytes: MAX_ANSWER_BYTES,
    });
    return decodeAnswer<T>(answer.status, answer.body.toString("utf8"));
  }

  /** The access's headers (authentication, impersonation) and ours, with the body's type and length. */
  #headers(options: RequestOptions, body: string | undefined, contentType: string | undefined) {
    const headers: Record<string, string | string[] | number> = {
      ...(options.headers as Record<string, string | string[]>),
      accept: "application/json",
      "user-agent": this.#userAgent,
    };
    if (body !== undefined) {
      headers["content-type"] = contentType ?? "application/json";
      headers["content-length"] = Buffer.byteLength(body);
    }
    return headers;
  }

  async #open(
    method: string,
    path: string,
    query: Query | undefined,
    timeoutMs: number,
    /** `stream`: a watch, cut only after `timeoutMs` without a byte; else the whole exchange must end in it. */
    extra: { body?: string; contentType?: string; signal?: AbortSignal; stream?: boolean },
  ): Promise<IncomingMessage> {
    const options: RequestOptions = await this.access.requestOptions();
    const headers = this.#headers(options, extra.body, extra.contentType);
    const base = this.#base;
    return new Promise((resolve, reject) => {
      const outgoing = this.#send({
        ...options,
        protocol: base.protocol,
        hostname: this.#hostname,
        port: base.port || undefined,
        method,
        path: `${this.#pathPrefix}${path}${queryString(query)}`,
        headers,
        signal: extra.signal,
      });
      if (timeoutMs > 0 && !extra.stream) this.#deadlines.add(outgoing, timeoutMs);
      else if (timeoutMs > 0) {
        // A watch: cut only when no byte came for that long (a socket timeout; there are few watches).
        outgoing.setTimeout(timeoutMs, () =>
          outgoing.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
        );
      }
      outgoing.once("response", resolve);
      outgoing.once("error", reject);
      outgoing.end(extra.body);
    });
  }
}

/** A whole answer's JSON; an error status becomes a KubeApiError. */
function decodeAnswer<T>(status: number, text: string): T {
  if (status >= 400) throw KubeApiError.fromResponse(status, text);
  return (text ? JSON.parse(text) : {}) as T;
}

function readText(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    response.once("end", () =>
      resolve(chunks.length === 1 ? chunks[0].toString("utf8") : Buffer.concat(chunks).toString("utf8")),
    );
    response.once("error", reject);
  });
}
