// The client side of the watch fan-out benchmark: N watchers (bench/lib/watch-stream.ts), all from one LIST's
// resourceVersion, and an open-loop writer sending merge PATCHes of one user at a fixed rate. Each PATCH carries its
// sequence number and its send time (performance.now() taken just before the request is written) in annotations;
// each watcher takes the receive time when the bytes arrive. Latency = receive - send, over every watcher × update
// pair. Runs in its own process (bench/lib/watch-load-child.ts), so the runner's heap from earlier scenarios
// cannot add garbage-collection pauses to what is measured.

import type { TLSSocket } from "node:tls";
import { ApiClient, USERS_PATH } from "./api.ts";
import { type LatencySummary, summarize } from "./stats.ts";
import { openWatchStream } from "./watch-stream.ts";

export interface WatchLoadOptions {
  url: string;
  token: string;
  ca: string;
  /** The user the writer patches. */
  user: string;
  /** The LIST resourceVersion every watcher starts from. */
  listRevision: string;
  watchers: number;
  updates: number;
  /** Updates per second. */
  rate: number;
  /** Called when the measured phase (the writer's first update to the last delivery) starts and ends. */
  onPhase?(phase: "start" | "end"): void;
}

export interface WatchLoadResult {
  openSeconds: number;
  sendSeconds: number;
  phaseSeconds: number;
  /** Every watcher × update latency. */
  latency: LatencySummary;
  /** Per update: the first watcher's latency, and the last watcher's minus the first's. */
  firstWatcher: LatencySummary;
  spread: LatencySummary;
  patch: LatencySummary;
  patchStatus: Record<string, number>;
  patchErrors: string[];
  delivered: number;
  expected: number;
  complete: number;
  streamsEnded: number;
  duplicates: number;
  outOfOrder: number;
  /** This process's CPU over the phase, in cores. */
  loadCpu: number;
}

const SEQ = '"bench.platform.sh/seq":"';
const SENT = '"bench.platform.sh/sent-at":"';
const RV = '"resourceVersion":"';

function field(line: string, marker: string): string | undefined {
  const start = line.indexOf(marker);
  if (start < 0) return undefined;
  const from = start + marker.length;
  return line.slice(from, line.indexOf('"', from));
}

interface WatcherState {
  received: number;
  duplicates: number;
  outOfOrder: number;
  lastRevision: number;
  seen: Uint8Array;
  socket?: TLSSocket;
  ended: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runWatchLoad(o: WatchLoadOptions): Promise<WatchLoadResult> {
  const url = new URL(o.url);
  const writer = new ApiClient(o.url, o.token, o.ca, 32);
  const watchers: WatcherState[] = [];
  const latencies = new Float64Array(o.watchers * o.updates);
  let samples = 0;
  const first = new Float64Array(o.updates).fill(Number.POSITIVE_INFINITY);
  const last = new Float64Array(o.updates).fill(Number.NEGATIVE_INFINITY);
  try {
    const open = async (state: WatcherState) => {
      state.socket = await openWatchStream({
        url,
        path: `${USERS_PATH}?watch=true&resourceVersion=${o.listRevision}`,
        token: o.token,
        ca: o.ca,
        onLine(line, now) {
          const seq = field(line, SEQ);
          if (seq === undefined) return;
          const index = Number(seq);
          const revision = Number(field(line, RV));
          if (revision <= state.lastRevision) state.outOfOrder++;
          state.lastRevision = revision;
          if (state.seen[index]) {
            state.duplicates++;
            return;
          }
          state.seen[index] = 1;
          state.received++;
          const latency = now - Number(field(line, SENT));
          latencies[samples++] = latency;
          if (latency < first[index]) first[index] = latency;
          if (latency > last[index]) last[index] = latency;
        },
        onEnd() {
          state.ended = true;
        },
      });
    };

    const opening = performance.now();
    for (let i = 0; i < o.watchers; i++) {
      watchers.push({
        received: 0,
        duplicates: 0,
        outOfOrder: 0,
        lastRevision: 0,
        seen: new Uint8Array(o.updates),
        ended: false,
      });
    }
    // 50 handshakes at a time: the connection storm is not what is measured.
    let nextWatcher = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (nextWatcher < o.watchers) await open(watchers[nextWatcher++]);
      }),
    );
    const openSeconds = (performance.now() - opening) / 1000;
    await sleep(500);

    // Open-loop writer: update k is due at k / rate seconds, whether or not earlier ones were answered.
    const patchStatus: Record<string, number> = {};
    const patchLatencies: number[] = [];
    const patchErrors: string[] = [];
    const inFlight: Promise<void>[] = [];
    o.onPhase?.("start");
    const loadCpuStart = process.cpuUsage();
    const started = performance.now();
    for (let k = 0; k < o.updates; k++) {
      const due = started + (k * 1000) / o.rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const sentAt = performance.now();
      const body = {
        metadata: {
          annotations: { "bench.platform.sh/seq": String(k), "bench.platform.sh/sent-at": sentAt.toFixed(3) },
        },
      };
      inFlight.push(
        writer.request("PATCH", `${USERS_PATH}/${o.user}`, body, "application/merge-patch+json").then(
          (res) => {
            patchStatus[res.status] = (patchStatus[res.status] ?? 0) + 1;
            patchLatencies.push(performance.now() - sentAt);
          },
          (error: Error) => {
            patchStatus.error = (patchStatus.error ?? 0) + 1;
            if (patchErrors.length < 3) patchErrors.push(`update ${k}: ${error.message}`);
          },
        ),
      );
    }
    const sendSeconds = (performance.now() - started) / 1000;
    await Promise.all(inFlight);
    const expected = o.watchers * o.updates;
    const deadline = performance.now() + 30_000;
    while (samples < expected && performance.now() < deadline) {
      if (watchers.every((w) => w.ended)) break;
      await sleep(20);
    }
    const phaseSeconds = (performance.now() - started) / 1000;
    const loadCpuUsed = process.cpuUsage(loadCpuStart);
    o.onPhase?.("end");

    const delivered = (values: Float64Array) => values.filter((v) => Number.isFinite(v));
    return {
      openSeconds,
      sendSeconds,
      phaseSeconds,
      latency: summarize(latencies, samples),
      firstWatcher: summarize(delivered(first)),
      spread: summarize(delivered(last.map((v, i) => v - first[i]))),
      patch: summarize(patchLatencies),
      patchStatus,
      patchErrors,
      delivered: samples,
      expected,
      complete: watchers.filter((w) => w.received === o.updates).length,
      streamsEnded: watchers.filter((w) => w.ended).length,
      duplicates: watchers.reduce((sum, w) => sum + w.duplicates, 0),
      outOfOrder: watchers.reduce((sum, w) => sum + w.outOfOrder, 0),
      loadCpu: (loadCpuUsed.user + loadCpuUsed.system) / 1e6 / phaseSeconds,
    };
  } finally {
    for (const w of watchers) w.socket?.destroy();
    writer.close();
  }
}
