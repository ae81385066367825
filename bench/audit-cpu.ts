// Audit cost per request, A/B between source trees (issues 14 and 19). For each tree one platform process serves a
// fixed number of GETs of one user (32 connections) and CREATEs of users (64 connections) from autocannon at each
// audit level; the datastore is on whenever audit is (the platform always has one). Rounds interleave trees and
// levels, each level's order rotating per round.
//
// This machine has 2 CPUs and the load generator needs one of them, so the server gets one of two setups:
//   --server-cpus 1 (default): every thread of the server on CPU 0, the load on CPU 1. The server's throughput is
//     its whole process's CPU per request (request thread + audit worker + V8 and libuv helpers): the "whole
//     process" view, and the req/s ratio of this setup.
//   --server-cpus 2: the request thread alone on CPU 0; the audit worker and every other server thread share CPU 1
//     with the load generator. Then only the request thread bounds the server, as on a machine with a core to spare
//     for the worker: the "request thread" view. "request thread busy" tells whether it was the bottleneck (near
//     100 %) or the load generator was.
// Both views are printed in both setups from /proc's per-thread CPU times, which depend far less on what else the
// machine runs than req/s does; the load average is printed with every run.
//
//   node bench/audit-cpu.ts --trees /path/a,/path/b [--server-cpus 1|2] [--rounds 3] [--gets 20000]
//                           [--creates 5000] [--levels off,Metadata,RequestResponse]

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { send } from "../test/support/https-json.ts";
import { type PlatformProcess, startPlatformProcess } from "../test/support/platform-process.ts";
import { benchUser, USERS_PATH } from "./lib/api.ts";
import { load } from "./lib/load.ts";
import { LOAD_CPU, SERVER_CPU } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { GET_CONNECTIONS, GET_PATH, GET_USER } from "./scenarios/baseline.ts";

const { values } = parseArgs({
  options: {
    trees: { type: "string", default: "." },
    rounds: { type: "string", default: "3" },
    gets: { type: "string", default: "20000" },
    creates: { type: "string", default: "5000" },
    levels: { type: "string", default: "off,Metadata,RequestResponse" },
    "server-cpus": { type: "string", default: "1" },
  },
});
const LEVEL: Record<string, number> = { off: 0, Metadata: 1, Request: 2, RequestResponse: 3 };
const trees = values.trees.split(",").map((tree) => resolve(tree));
const levels = values.levels.split(",");
const rounds = Number(values.rounds);
const serverCpus = Number(values["server-cpus"]);
if (serverCpus !== 1 && serverCpus !== 2) throw new Error("--server-cpus is 1 or 2");
const CONFIG = "/apis/management.platform.sh/v1/configs/platform-config";
const GOAL = 0.8;
const USER_HZ = 100;

interface Server {
  tree: string;
  dir: string;
  platform: PlatformProcess;
}

/** Each thread's CPU so far (ms) by role: the request thread, the audit worker, everything else. */
function threadCpuMs(pid: number): { main: number; worker: number; other: number } {
  const out = { main: 0, worker: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
      if (tid === String(pid)) out.main += ms;
      else if (name === "WorkerThread") out.worker += ms;
      else out.other += ms;
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

/** Pins the server per --server-cpus; done before every run, since threads started since inherit the main's CPU. */
function pinServer(pid: number): void {
  if (serverCpus === 1) {
    pinToCpu(pid, SERVER_CPU);
    return;
  }
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const cpu = tid === String(pid) ? SERVER_CPU : LOAD_CPU;
    try {
      execFileSync("taskset", ["-p", "-c", String(cpu), tid], { stdio: "ignore" });
    } catch {
      // a thread that ended meanwhile
    }
  }
}

const loadAverage = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);

async function start(tree: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), "vcp-bench-audit-cpu-"));
  const platform = await startPlatformProcess({ main: join(tree, "src/cli/main.ts"), extraArgs: ["--audit-dir", dir] });
  const created = await send(platform, "POST", USERS_PATH, {
    token: platform.adminKey,
    body: benchUser({ name: GET_USER }),
  });
  if (created.status !== 201) throw new Error(`creating the user: ${created.status} ${created.body}`);
  return { tree, dir, platform };
}

async function setLevel(server: Server, level: number): Promise<void> {
  const raw = level
    ? `audit: {enabled: true, level: ${level}, path: ${join(server.dir, "audit.log")}, maxSize: 100, maxBackups: 1}\n`
    : "";
  const reply = await send(server.platform, "PATCH", CONFIG, {
    token: server.platform.adminKey,
    body: { spec: { raw } },
    contentType: "application/merge-patch+json",
  });
  if (reply.status !== 200) throw new Error(`config write: ${reply.status} ${reply.body}`);
}

interface Run {
  rate: number;
  /** µs of CPU per request. */
  process: number;
  main: number;
  worker: number;
  helpers: number;
  /** Share of the run's wall time the request thread was on a CPU. */
  mainBusy: number;
  loadAverage: number;
  /** Cores used meanwhile by everything but the server and the load generator. */
  otherCpu: number;
}

async function measure(server: Server, kind: "get" | "create"): Promise<Run> {
  const p = server.platform;
  const options =
    kind === "get"
      ? { url: p.url, token: p.adminKey, path: GET_PATH, connections: GET_CONNECTIONS }
      : {
          url: p.url,
          token: p.adminKey,
          method: "POST",
          path: USERS_PATH,
          body: JSON.stringify(benchUser({ generateName: "cpu-" })),
          connections: 64,
        };
  const pid = p.child.pid!;
  pinServer(pid);
  await load({ ...options, amount: kind === "get" ? 3000 : 600 }); // warm-up: JIT, caches, connections
  const average = loadAverage();
  const before = threadCpuMs(pid);
  const result = await load({
    ...options,
    amount: Number(kind === "get" ? values.gets : values.creates),
    serverPid: pid,
  });
  const seconds = result.activeSeconds;
  const after = threadCpuMs(pid);
  const per = (ms: number) => (ms * 1000) / result.ok;
  const main = after.main - before.main;
  const worker = after.worker - before.worker;
  const helpers = after.other - before.other;
  return {
    rate: result.ok / seconds,
    process: per(main + worker + helpers),
    main: per(main),
    worker: per(worker),
    helpers: per(helpers),
    mainBusy: main / 1000 / seconds,
    loadAverage: average,
    otherCpu: result.otherCpu,
  };
}

const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim();

pinToCpu(process.pid, LOAD_CPU);
const servers: Server[] = [];
for (const tree of trees) servers.push(await start(tree));
const runs = new Map<string, Run[]>();
try {
  console.log(
    `Audit cost per request — ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? "?"}; trees: ${trees.join(", ")}\n` +
      `server: ${
        serverCpus === 1
          ? `one CPU (every thread on CPU ${SERVER_CPU}; load generator on CPU ${LOAD_CPU})`
          : `two CPUs (request thread alone on CPU ${SERVER_CPU}; audit worker and helper threads on CPU ${LOAD_CPU}, shared with the load generator)`
      }\n` +
      `${values.gets} GETs, ${values.creates} CREATEs per run; ${rounds} rounds; start: ${uptime()}\n`,
  );
  for (let round = 0; round < rounds; round++) {
    for (const [i] of levels.entries()) {
      const level = levels[(i + round) % levels.length];
      for (const server of round % 2 ? [...servers].reverse() : servers) {
        await setLevel(server, LEVEL[level]);
        for (const kind of ["get", "create"] as const) {
          const run = await measure(server, kind);
          const key = `${server.tree}|${kind}|${level}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
          console.log(
            `round ${round + 1} ${kind} ${level} ${server.tree}: ${run.rate.toFixed(0)} req/s; CPU µs/request: ` +
              `process ${run.process.toFixed(1)} = request thread ${run.main.toFixed(1)} + audit worker ` +
              `${run.worker.toFixed(1)} + helpers ${run.helpers.toFixed(1)}; request thread busy ` +
              `${(run.mainBusy * 100).toFixed(0)} %; load average ${run.loadAverage.toFixed(1)}, other CPU ` +
              `${run.otherCpu.toFixed(2)} cores`,
          );
        }
      }
    }
  }
  const field = (key: string, pick: (run: Run) => number) => median((runs.get(key) ?? []).map(pick));
  console.log(
    "\nMedians. Ratios are off ÷ level for CPU per request (the throughput a CPU-bound server keeps) and level ÷ off for req/s.\n",
  );
  console.log(
    "| tree | request | audit | req/s | vs off | process µs | vs off | request thread µs | vs off | audit worker µs | helpers µs | request thread busy |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
  const goals: string[] = [];
  for (const server of servers) {
    for (const kind of ["get", "create"] as const) {
      const off = `${server.tree}|${kind}|off`;
      for (const level of levels) {
        const key = `${server.tree}|${kind}|${level}`;
        const rate = field(key, (r) => r.rate);
        const process = field(key, (r) => r.process);
        const main = field(key, (r) => r.main);
        const ratios = {
          rate: rate / field(off, (r) => r.rate),
          process: field(off, (r) => r.process) / process,
          main: field(off, (r) => r.main) / main,
        };
        console.log(
          `| ${server.tree} | ${kind.toUpperCase()} | ${level} | ${rate.toFixed(0)} | ${ratios.rate.toFixed(2)} | ` +
            `${process.toFixed(1)} | ${ratios.process.toFixed(2)} | ${main.toFixed(1)} | ${ratios.main.toFixed(2)} | ` +
            `${field(key, (r) => r.worker).toFixed(1)} | ${field(key, (r) => r.helpers).toFixed(1)} | ` +
            `${(field(key, (r) => r.mainBusy) * 100).toFixed(0)} % |`,
        );
        // Issue 14: GET and CREATE at Metadata; issue 19: GET at RequestResponse (the datastore is always on).
        if (level === "Metadata" || (level === "RequestResponse" && kind === "get")) {
          const verdict = (ratio: number) => `${ratio.toFixed(2)} ${ratio >= GOAL ? "met" : "NOT met"}`;
          goals.push(
            `- ${server.tree}: ${kind.toUpperCase()} at ${level} ≥ ${GOAL} × off — req/s ${verdict(ratios.rate)}; ` +
              `whole process ${verdict(ratios.process)}; request thread ${verdict(ratios.main)}`,
          );
        }
      }
    }
  }
  console.log(`\n${goals.join("\n")}\n\nend: ${uptime()}`);
} finally {
  for (const server of servers) {
    await server.platform.stop();
    await rm(server.dir, { recursive: true, force: true });
  }
}
