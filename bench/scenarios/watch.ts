// 6. 1,000 concurrent watchers receive 1,000 updates of one user (the client side: bench/lib/watch-load.ts, in a
// child process on the load CPU). Latency = receive - send over every watcher × update pair: it includes the PATCH
// itself (HTTP, registry, fsync), the fan-out, and the client's own TLS and parsing on the load CPU. Updates are
// sent open-loop at a fixed rate. This process measures the server's CPU over the child's measured phase.

import { fork } from "node:child_process";
import { benchUser, USERS_PATH } from "../lib/api.ts";
import { LOAD_CPU, startBenchPlatform } from "../lib/platform.ts";
import { cpuTimeMs, otherCpuMeter, pinToCpu } from "../lib/proc.ts";
import { percent, type Scenario } from "../lib/scenario.ts";
import { formatInt, formatMs, round } from "../lib/stats.ts";
import type { WatchLoadOptions, WatchLoadResult } from "../lib/watch-load.ts";

/** Issue 36: the server's CPU per delivered watch event at 1,000 watchers. */
const GOAL_SERVER_MICROS_PER_EVENT = 5;
export const GOAL_WATCH_P99_MS = 50;
const WATCHERS = 1000;
const UPDATES = 1000;
/**
 * Updates per second the writer sends: 20/s is 20,000 deliveries/s, about half of what one server core delivers
 * to 1,000 TLS streams (and what one load core can receive); `--watch-rate` changes it.
 */
export const DEFAULT_WATCH_RATE = 20;
const USER = "bench-watch";
const CHILD = new URL("../lib/watch-load-child.ts", import.meta.url).pathname;

interface PhaseCpu {
  serverCpu: number;
  otherCpu: number;
}

/** Runs the client side in a fresh process pinned to the load CPU; measures the server over its phase. */
function runChild(options: Omit<WatchLoadOptions, "onPhase">, serverPid: number) {
  return new Promise<{ result: WatchLoadResult } & PhaseCpu>((resolve, reject) => {
    const child = fork(CHILD, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    if (child.pid) pinToCpu(child.pid, LOAD_CPU);
    let serverStart = 0;
    let started = 0;
    let otherEnd: (() => number) | undefined;
    let phase: PhaseCpu | undefined;
    child.on("message", (message: { phase?: string; result?: WatchLoadResult; error?: string }) => {
      if (message.phase === "start") {
        serverStart = cpuTimeMs(serverPid);
        started = performance.now();
        otherEnd = otherCpuMeter(serverPid, child.pid === undefined ? [] : [child.pid]);
      } else if (message.phase === "end") {
        const seconds = (performance.now() - started) / 1000;
        phase = { serverCpu: (cpuTimeMs(serverPid) - serverStart) / 1000 / seconds, otherCpu: otherEnd?.() ?? 0 };
      } else if (message.result && phase) {
        resolve({ result: message.result, ...phase });
      } else {
        reject(new Error(`watch clients: ${message.error ?? "no measured phase"}`));
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`watch clients exited (${code}) without a result`)));
    child.send(options);
  });
}

export function watchScenario(rate = DEFAULT_WATCH_RATE): Scenario {
  return {
    name: "watch",
    title: `${formatInt(WATCHERS)} watchers × ${formatInt(UPDATES)} updates`,
    async run(context) {
      const platform = await startBenchPlatform();
      try {
        await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: USER }));
        const list = await platform.api.expect<{ metadata: { resourceVersion: string } }>(200, "GET", USERS_PATH);
        const listRevision = list.metadata.resourceVersion;
        context.log(`watch: ${WATCHERS} watchers, then ${UPDATES} updates at ${rate}/s`);
        const {
          result: r,
          serverCpu,
          otherCpu,
        } = await runChild(
          {
            url: platform.url,
            token: platform.token,
            ca: platform.ca,
            user: USER,
            listRevision,
            watchers: WATCHERS,
            updates: UPDATES,
            rate,
          },
          platform.pid,
        );
        const { latency, firstWatcher, spread, patch, patchStatus, patchErrors, loadCpu } = r;
        const { openSeconds, sendSeconds, phaseSeconds, complete, duplicates, outOfOrder, expected } = r;
        const samples = r.delivered;
        const cutOff = r.streamsEnded;
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
            {
              goal: `server CPU per delivered event ≤ ${GOAL_SERVER_MICROS_PER_EVENT} µs (issue 36)`,
              actual: `${perDelivery(serverCpu).toFixed(1)} µs`,
              met: perDelivery(serverCpu) <= GOAL_SERVER_MICROS_PER_EVENT,
            },
          ],
          notes: [
            `Watch streams opened in ${openSeconds.toFixed(1)} s (50 TLS handshakes at a time), all from the LIST resourceVersion ${listRevision}.`,
            ...patchErrors.map((e) => `Writer error: ${e}`),
            `Latency includes the PATCH (HTTP, registry, commit with fsync), the server's fan-out, and the client side (TLS decryption, chunk decoding, line splitting; bench/lib/watch-stream.ts) of all ${formatInt(WATCHERS)} streams in one fresh client process on the load CPU.`,
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
        await platform.stop();
      }
    },
  };
}
