// The agent's one outbound connection: dial the tunnel of its cluster on a platform address, serve the platform's
// streams on it until it closes, and dial again — the next address each time (replicas behind several addresses, or
// one load balancer), after a pause that doubles from 0.5 s to 30 s (with jitter, so a fleet of agents does not
// come back in step) and starts over once a connection has lasted. A ping every `pingIntervalMs` notices a dead
// connection the kernel has not (a vanished NAT mapping). A refusal (a revoked key: 401, a deleted cluster: 404) is
// logged once per distinct message; the agent keeps trying, since an administrator can fix it.

import type { IncomingHttpHeaders } from "node:http";
import type { ServerHttp2Session, ServerHttp2Stream } from "node:http2";
import type { Logger } from "pino";
import { ISSUER_HEADER } from "../http/tunnel/tunnel-protocol.ts";
import { dialTunnel, TunnelRefusedError } from "../http/tunnel/tunnel-session.ts";

const MIN_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
/** A connection that lasted this long resets the pause. */
const STABLE_MS = 10_000;
const DIAL_TIMEOUT_MS = 15_000;
const DEFAULT_PING_MS = 30_000;

export interface TunnelClientOptions {
  cluster: string;
  /** Platform base URLs, tried in turn. */
  urls: readonly string[];
  caPem?: string;
  insecure: boolean;
  accessKey: string;
  onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void;
  onConnected?(url: string, issuer: string | undefined): void;
  /** The platform refused the tunnel (401: the key no longer works; 404: the cluster was deleted). */
  onRefused?(code: number): void;
  pingIntervalMs?: number;
  logger?: Logger;
}

export interface TunnelState {
  connected: boolean;
  url?: string;
  since?: string;
  error?: string;
}

export class TunnelClient {
  readonly #options: TunnelClientOptions;
  #state: TunnelState = { connected: false };
  #session?: ServerHttp2Session;
  #closed = false;
  #wake?: () => void;
  #loop?: Promise<void>;

  constructor(options: TunnelClientOptions) {
    this.#options = options;
  }

  state(): TunnelState {
    return { ...this.#state };
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    this.#session?.close();
    this.#session?.destroy();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { urls, cluster, logger } = this.#options;
    let delay = MIN_DELAY_MS;
    let lastError = "";
    for (let attempt = 0; !this.#closed; attempt++) {
      const base = urls[attempt % urls.length].replace(/\/+$/, "");
      const started = Date.now();
      try {
        await this.#connectOnce(`${base}/cluster-agent/${cluster}/tunnel`, base);
        lastError = "";
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.#state = { connected: false, url: base, error: message };
        if (error instanceof TunnelRefusedError) this.#options.onRefused?.(error.code);
        if (message !== lastError) logger?.warn({ platform: base, reason: message }, "cannot connect to the platform");
        lastError = message;
      }
      if (this.#closed) return;
      if (Date.now() - started >= STABLE_MS) delay = MIN_DELAY_MS;
      const pause = delay * (0.8 + Math.random() * 0.4);
      delay = Math.min(MAX_DELAY_MS, delay * 2);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** One connection, served until it closes. */
  async #connectOnce(url: string, base: string): Promise<void> {
    const { logger } = this.#options;
    const { session, headers } = await dialTunnel({
      url,
      ca: this.#options.caPem,
      insecure: this.#options.insecure,
      token: this.#options.accessKey,
      timeoutMs: DIAL_TIMEOUT_MS,
    });
    this.#session = session;
    const closed = new Promise<void>((resolve) => session.once("close", resolve));
    if (this.#closed) {
      session.destroy();
      return;
    }
    session.on("stream", (stream, streamHeaders) => this.#options.onStream(stream, streamHeaders));
    session.on("error", (error) => logger?.warn({ err: String(error) }, "the tunnel failed"));
    const ping = setInterval(() => {
      if (!session.ping((error) => error && session.destroy())) session.destroy();
    }, this.#options.pingIntervalMs ?? DEFAULT_PING_MS);
    ping.unref();
    this.#state = { connected: true, url: base, since: new Date().toISOString() };
    logger?.info({ platform: base }, "connected to the platform");
    const issuer = headers[ISSUER_HEADER];
    this.#options.onConnected?.(base, Array.isArray(issuer) ? issuer[0] : issuer);
    await closed;
    clearInterval(ping);
    this.#session = undefined;
    this.#state = { connected: false, url: base, error: "the connection closed" };
    if (!this.#closed) logger?.warn({ platform: base }, "the connection to the platform closed; reconnecting");
  }
}
