// 6. 1,000 concurrent watchers (one raw TLS connection each, bench/lib/watch-stream.ts, all from the resourceVersion
// of one LIST) receive 1,000 updates of one user. Each update is a merge PATCH carrying its sequence number and its
// send time (performance.now() of this process, taken just before the request is written) in annotations; each
// watcher takes the receive time when a chunk arrives. Latency = receive - send, over every watcher × update pair:
// it includes the PATCH itself (HTTP, registry, fsync), the fan-out, and the client's own TLS and parsing on the
// load CPU. Updates are sent open-loop at a fixed rate.

import type { TLSSocket } from "node:tls";
import { ApiClient, benchUser, USERS_PATH } from "../lib/api.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { cpuTimeMs, otherCpuMeter } from "../lib/proc.ts";
import { percent, type Scenario } from "../lib/scenario.ts";
import { formatInt, formatMs, round, summarize } from "../lib/stats.ts";
import { openWatchStream } from "../lib/watch-stream.ts";

export const GOAL_WATCH_P99_MS = 50;
const WATCHERS = 1000;
const UPDATES = 1000;
/**
 * Updates per second the writer sends: 20/s is 20,000 deliveries/s, about half of what one server core delivers
 * to 1,000 TLS streams (and what one load core can receive); `--watch-rate` changes it.
 */
export const DEFAULT_WATCH_RATE = 20;
const USER = "bench-watch";
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

export function watchScenario(rate = DEFAULT_WATCH_RATE): Scenario {
  return {
    name: "watch",
    title: `${formatInt(WATCHERS)} watchers × ${formatInt(UPDATES)} updates`,
    async run(context) {
      const platform = await startBenchPlatform();
      const url = new URL(platform.url);
      const writer = new ApiClient(platform.url, platform.token, platform.ca, 32);
      const watchers: WatcherState[] = [];
      const latencies = new Float64Array(WATCHERS * UPDATES);
      let samples = 0;
      // Per update: the latency of the first and of the last watcher to receive it.
      const first = new Float64Array(UPDATES).fill(Number.POSITIVE_INFINITY);
      const last = new Float64Array(UPDATES).fill(Number.NEGATIVE_INFINITY);
      try {
        await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: USER }));
        const list = await platform.api.expect<{ metadata: { resourceVersion: string } }>(200, "GET", USERS_PATH);
        const listRevision = list.metadata.resourceVersion;

        const open = async (state: WatcherState) => {
          state.socket = await openWatchStream({
            url,
            path: `${USERS_PATH}?watch=true&resourceVersion=${listRevision}`,
            token: platform.token,
            ca: platform.ca,
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
        for (let i = 0; i < WATCHERS; i++) {
          watchers.push({
            received: 0,
            duplicates: 0,
            outOfOrder: 0,
            lastRevision: 0,
            seen: new Uint8Array(UPDATES),
            ended: false,
          });
        }
        // 50 handshakes at a time: the connection storm is not what is measured.
        let nextWatcher = 0;
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            while (nextWatcher < WATCHERS) await open(watchers[nextWatcher++]);
          }),
        );
        const openSeconds = (performance.now() - opening) / 1000;
        context.log(`watch: ${WATCHERS} watchers open in ${openSeconds.toFixed(1)} s; ${UPDATES} updates at ${rate}/s`);
        await sleep(500);

        // Open-loop writer: update k is due at k / rate seconds, whether or not earlier ones were answered.
        const patchStatus: Record<string, number> = {};
        const patchLatencies: number[] = [];
        const patchErrors: string[] = [];
        const inFlight: Promise<void>[] = [];
        const serverCpuStart = cpuTimeMs(platform.pid);
        const loadCpuStart = process.cpuUsage();
        const otherCpuEnd = otherCpuMeter(platform.pid);
        const started = performance.now();
        for (let k = 0; k < UPDATES; k++) {
          const due = started + (k * 1000) / rate;
          const wait = due - performance.now();
          if (wait > 1) await sleep(wait);
          const sentAt = performance.now();
          const body = {
            metadata: {
              annotations: { "bench.platform.sh/seq": String(k), "bench.platform.sh/sent-at": sentAt.toFixed(3) },
            },
          };
          inFlight.push(
            writer.request("PATCH", `${USERS_PATH}/${USER}`, body, "application/merge-patch+json").then(
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
        const deadline = performance.now() + 30_000;
        while (samples < WATCHERS * UPDATES && performance.now() < deadline) {
          if (watchers.every((w) => w.ended)) break;
          await sleep(20);
        }
        const phaseSeconds = (performance.now() - started) / 1000;
        const serverCpu = (cpuTimeMs(platform.pid) - serverCpuStart) / 1000 / phaseSeconds;
        const loadCpuUsed = process.cpuUsage(loadCpuStart);
        const loadCpu = (loadCpuUsed.user + loadCpuUsed.system) / 1e6 / phaseSeconds;
        const otherCpu = otherCpuEnd();

        const latency = summarize(latencies, samples);
        const complete = watchers.filter((w) => w.received === UPDATES).length;
        const cutOff = watchers.filter((w) => w.ended).length;
        const duplicates = watchers.reduce((sum, w) => sum + w.duplicates, 0);
        const outOfOrder = watchers.reduce((sum, w) => sum + w.outOfOrder, 0);
        const expected = WATCHERS * UPDATES;
        const patch = summarize(patchLatencies);
        const delivered = (values: Float64Array) => values.filter((v) => Number.isFinite(v));
        const firstWatcher = summarize(delivered(first));
        const spread = summarize(delivered(last.map((v, i) => v - first[i])));
        const allDelivered = samples === expected && duplicates === 0 && outOfOrder === 0;
        // CPU per delivered event (each includes 1/WATCHERS of an update's PATCH): comparable across noisy runs.
        const perDelivery = (cores: number) => (samples > 0 ? (cores * phaseSeconds * 1e6) / samples : Number.NaN);
        return {
          name: "watch",
          title: this.title,
          tables: [
            {
              columns: [
                "measurement",
                "update rate",
                "events delivered",
                "p50 ms",
                "p99 ms",
                "max ms",
                "watchers complete",
                "server CPU",
                "load CPU",
                "other CPU",
              ],
              rows: [
                [
                  `delivery latency, ${formatInt(WATCHERS)} watchers`,
                  `${rate}/s (sent in ${sendSeconds.toFixed(1)} s)`,
                  `${formatInt(samples)} / ${formatInt(expected)}`,
                  formatMs(latency.p50),
                  formatMs(latency.p99),
                  formatMs(latency.max),
                  `${formatInt(complete)} / ${formatInt(WATCHERS)}`,
                  percent(serverCpu),
                  percent(loadCpu),
                  percent(otherCpu),
                ],
                [
                  "per update: first watcher to receive it",
                  "",
                  "",
                  formatMs(firstWatcher.p50),
                  formatMs(firstWatcher.p99),
                  formatMs(firstWatcher.max),
                  "",
                  "",
                  "",
                  "",
                ],
                [
                  "per update: last − first watcher (fan-out spread)",
                  "",
                  "",
                  formatMs(spread.p50),
                  formatMs(spread.p99),
                  formatMs(spread.max),
                  "",
                  "",
                  "",
                  "",
                ],
                [
                  "the writer's PATCH round trip",
                  "",
                  Object.entries(patchStatus)
                    .map(([code, count]) => `${code}×${count}`)
                    .join(" "),
                  formatMs(patch.p50),
                  formatMs(patch.p99),
                  formatMs(patch.max),
                  "",
                  "",
                  "",
                  "",
                ],
              ],
            },
          ],
          goals: [
            {
              goal: `delivery p99 < ${GOAL_WATCH_P99_MS} ms`,
              actual: `${formatMs(latency.p99)} ms`,
              met: latency.p99 < GOAL_WATCH_P99_MS,
            },
            {
              goal: "every watcher receives every update, once, in order",
              actual: `${formatInt(complete)}/${formatInt(WATCHERS)} complete, ${duplicates} duplicates, ${outOfOrder} out of order, ${cutOff} streams ended`,
              met: allDelivered,
            },
          ],
          notes: [
            `Watch streams opened in ${openSeconds.toFixed(1)} s (50 TLS handshakes at a time), all from the LIST resourceVersion ${listRevision}.`,
            ...patchErrors.map((e) => `Writer error: ${e}`),
            `Latency includes the PATCH (HTTP, registry, commit with fsync), the server's fan-out, and the client side (TLS decryption, chunk decoding, line splitting; bench/lib/watch-stream.ts) of all ${formatInt(WATCHERS)} streams in the single load process.`,
            `CPU per delivered event: server ${perDelivery(serverCpu).toFixed(1)} µs, load process ${perDelivery(loadCpu).toFixed(1)} µs.`,
          ],
          data: {
            watchers: WATCHERS,
            updates: UPDATES,
            ratePerSecond: rate,
            sendSeconds: round(sendSeconds),
            phaseSeconds: round(phaseSeconds),
            openSeconds: round(openSeconds),
            delivered: samples,
            expected,
            complete,
            duplicates,
            outOfOrder,
            streamsEnded: cutOff,
            latencyMs: {
              p50: round(latency.p50, 3),
              p99: round(latency.p99, 3),
              max: round(latency.max, 3),
              mean: round(latency.mean, 3),
            },
            firstWatcherMs: {
              p50: round(firstWatcher.p50, 3),
              p99: round(firstWatcher.p99, 3),
              max: round(firstWatcher.max, 3),
            },
            fanOutSpreadMs: { p50: round(spread.p50, 3), p99: round(spread.p99, 3), max: round(spread.max, 3) },
            patch: {
              status: patchStatus,
              p50: round(patch.p50, 3),
              p99: round(patch.p99, 3),
              max: round(patch.max, 3),
            },
            serverCpu: round(serverCpu, 2),
            loadCpu: round(loadCpu, 2),
            otherCpu: round(otherCpu, 2),
            serverMicrosPerDelivery: round(perDelivery(serverCpu), 1),
            loadMicrosPerDelivery: round(perDelivery(loadCpu), 1),
          },
        };
      } finally {
        for (const w of watchers) w.socket?.destroy();
        writer.close();
        await platform.stop();
      }
    },
  };
}
