// autocannon, typed for what the scenarios use, plus exact latency percentiles (autocannon's own histogram rounds
// to whole milliseconds) and the server's CPU use during the run.

import type { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { cpuTimeMs, otherCpuMeter } from "./proc.ts";
import { type LatencySummary, summarize } from "./stats.ts";

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}

interface AutocannonOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  duration?: number;
  amount?: number;
  idReplacement?: boolean;
  timeout?: number;
  requests?: AutocannonRequest[];
}

interface AutocannonResult {
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}

interface AutocannonInstance extends EventEmitter {
  stop(): void;
}

type Autocannon = (
  options: AutocannonOptions,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

export type { AutocannonRequest };

export interface LoadOptions {
  url: string;
  token: string;
  method?: string;
  path: string;
  body?: string;
  contentType?: string;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  /** Stop after this many responses. */
  amount?: number;
  /** Replace `[<id>]` in the body with a unique id per request. */
  idReplacement?: boolean;
  requests?: AutocannonRequest[];
  /** The server under test, for its CPU use. */
  serverPid?: number;
  /** Send no Authorization header (the requests of someone without credentials). */
  anonymous?: boolean;
  /** Called with the running instance (to stop it early). */
  onStart?: (instance: AutocannonInstance) => void;
}

export interface LoadResult {
  /** Responses received (any status). */
  responses: number;
  /** Responses with a 2xx status. */
  ok: number;
  seconds: number;
  /**
   * From the start to the last response: autocannon reports the end of an `amount` run on its next one-second tick,
   * so `seconds` (and `rate`) of a short run include idle time; rates of such runs use this.
   */
  activeSeconds: number;
  /** 2xx responses per second. */
  rate: number;
  /** Latency of 2xx responses, ms. */
  latency: LatencySummary;
  status: Record<string, number>;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  bytesPerResponse: number;
  /** CPU time of the server during the run / wall time (1 = one core busy). */
  serverCpu?: number;
  /** CPU time of this (load) process during the run / wall time. */
  loadCpu: number;
  /** CPU used by anything else on the machine during the run (other processes, uncharged kernel work), cores. */
  otherCpu: number;
}

export function load(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let responses = 0;
  let bytes = 0;
  const status: Record<string, number> = {};
  const headers: Record<string, string> = { accept: "application/json" };
  if (!options.anonymous) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  return new Promise((resolve, reject) => {
    let started = performance.now();
    let lastResponse = started;
    let serverCpuStart = options.serverPid ? cpuTimeMs(options.serverPid) : 0;
    let loadCpuStart = process.cpuUsage();
    let otherCpu = otherCpuMeter(options.serverPid);
    const instance = autocannon(
      {
        url: `${options.url}${options.path}`,
        method: options.method ?? "GET",
        headers,
        connections: options.connections,
        timeout: 30,
        // autocannon rejects keys that are present but undefined.
        ...(options.body === undefined ? {} : { body: options.body }),
        ...(options.amount === undefined ? { duration: options.duration } : { amount: options.amount }),
        ...(options.idReplacement ? { idReplacement: true } : {}),
        ...(options.requests ? { requests: options.requests } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const seconds = (performance.now() - started) / 1000;
        const serverCpu = options.serverPid ? safeCpu(options.serverPid, serverCpuStart, seconds) : undefined;
        const loadCpuUsed = process.cpuUsage(loadCpuStart);
        const otherCores = otherCpu();
        const ok = Object.entries(status)
          .filter(([code]) => code.startsWith("2"))
          .reduce((sum, [, count]) => sum + count, 0);
        resolve({
          responses,
          ok,
          seconds,
          activeSeconds: (lastResponse - started) / 1000,
          rate: ok / seconds,
          latency: summarize(latencies),
          status,
          errors: result.errors - result.timeouts,
          timeouts: result.timeouts,
          bytesPerResponse: responses ? bytes / responses : 0,
          serverCpu,
          loadCpu: (loadCpuUsed.user + loadCpuUsed.system) / 1e6 / seconds,
          otherCpu: otherCores,
        });
      },
    );
    instance.on("start", () => {
      started = performance.now();
      serverCpuStart = options.serverPid ? cpuTimeMs(options.serverPid) : 0;
      loadCpuStart = process.cpuUsage();
      otherCpu = otherCpuMeter(options.serverPid);
    });
    instance.on("response", (_client: unknown, statusCode: number, resBytes: number, responseTime: number) => {
      lastResponse = performance.now();
      responses++;
      bytes += resBytes;
      status[statusCode] = (status[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
    options.onStart?.(instance);
  });
}

/** The server may be gone (killed on purpose) by the end of a run. */
function safeCpu(pid: number, start: number, seconds: number): number | undefined {
  try {
    return (cpuTimeMs(pid) - start) / 1000 / seconds;
  } catch {
    return undefined;
  }
}

/** A short unmeasured run first (JIT, connection setup, caches), then the measured one. */
export async function warmThenLoad(options: LoadOptions, warmupSeconds: number): Promise<LoadResult> {
  if (warmupSeconds > 0) await load({ ...options, duration: warmupSeconds, amount: undefined, serverPid: undefined });
  return load(options);
}
