// Server CPU per audited request, A/B between source trees (issues 14 and 19). For each tree one platform process
// runs pinned to CPU 0; autocannon runs here on CPU 1 and sends a fixed number of GETs of one user (32 connections)
// and CREATEs of users (64 connections) at each audit level. The figure is the server's CPU time (all its threads:
// the request thread and the audit worker) divided by the requests served. Unlike requests per second, it hardly
// depends on what else the machine runs, so it stays usable on a busy machine; a CPU-bound server's throughput
// ratio between two levels is the inverse ratio of these figures. The request thread's and the audit worker's
// shares are shown apart: with a core to spare for the worker, the request thread alone bounds throughput.
// Rounds interleave trees and levels.
//
//   node bench/audit-cpu.ts --trees /path/a,/path/b [--rounds 3] [--gets 20000] [--creates 5000]
//                           [--levels off,Metadata,RequestResponse]

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
import { cpuTimeMs, pinToCpu } from "./lib/proc.ts";
import { GET_CONNECTIONS, GET_PATH, GET_USER } from "./scenarios/baseline.ts";

const { values } = parseArgs({
  options: {
    trees: { type: "string", default: "." },
    rounds: { type: "string", default: "3" },
    gets: { type: "string", default: "20000" },
    creates: { type: "string", default: "5000" },
    levels: { type: "string", default: "off,Metadata,RequestResponse" },
  },
});
const LEVEL: Record<string, number> = { off: 0, Metadata: 1, Request: 2, RequestResponse: 3 };
const trees = values.trees.split(",").map((tree) => resolve(tree));
const levels = values.levels.split(",");
const rounds = Number(values.rounds);
const CONFIG = "/apis/management.platform.sh/v1/configs/platform-config";

interface Server {
  tree: string;
  dir: string;
  platform: PlatformProcess;
}

async function start(tree: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), "vcp-bench-audit-cpu-"));
  const platform = await startPlatformProcess({ main: join(tree, "src/cli/main.ts"), extraArgs: ["--audit-dir", dir] });
  pinToCpu(platform.child.pid!, SERVER_CPU);
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

/** Server CPU µs per request for a fixed amount of one kind of request. */
/** CPU ms so far of the process's request thread ("MainThread") and its audit worker ("WorkerThread"). */
function threadCpuMs(pid: number): { main: number; worker: number } {
  const out = { main: 0, worker: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ 100
      if (name === "MainThread") out.main += ms;
      else if (name === "WorkerThread") out.worker += ms;
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

async function measure(
  server: Server,
  kind: "get" | "create",
): Promise<{ us: number; main: number; worker: number; other: number }> {
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
  await load({ ...options, amount: kind === "get" ? 3000 : 600 }); // warm-up: JIT, caches, connections
  const pid = p.child.pid!;
  const before = cpuTimeMs(pid);
  const threadsBefore = threadCpuMs(pid);
  const result = await load({
    ...options,
    amount: Number(kind === "get" ? values.gets : values.creates),
    serverPid: pid,
  });
  const used = cpuTimeMs(pid) - before;
  const threads = threadCpuMs(pid);
  const per = (ms: number) => (ms * 1000) / result.ok;
  return {
    us: per(used),
    main: per(threads.main - threadsBefore.main),
    worker: per(threads.worker - threadsBefore.worker),
    other: result.otherCpu,
  };
}

pinToCpu(process.pid, LOAD_CPU);
const servers: Server[] = [];
for (const tree of trees) servers.push(await start(tree));
const samples = new Map<string, number[]>();
const others: number[] = [];
try {
  console.log(
    `Audit CPU per request — ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? "?"}; trees: ${trees.join(", ")}; ` +
      `${values.gets} GETs, ${values.creates} CREATEs per run; ${rounds} rounds\n`,
  );
  for (let round = 0; round < rounds; round++) {
    for (const [i] of levels.entries()) {
      const level = levels[(i + round) % levels.length];
      for (const server of round % 2 ? [...servers].reverse() : servers) {
        await setLevel(server, LEVEL[level]);
        for (const kind of ["get", "create"] as const) {
          const { us, main, worker, other } = await measure(server, kind);
          const key = `${server.tree}|${kind}|${level}`;
          samples.set(key, [...(samples.get(key) ?? []), us]);
          samples.set(`${key}|main`, [...(samples.get(`${key}|main`) ?? []), main]);
          samples.set(`${key}|worker`, [...(samples.get(`${key}|worker`) ?? []), worker]);
          others.push(other);
          console.log(
            `round ${round + 1} ${kind} ${level} ${server.tree}: ${us.toFixed(1)} µs/request, request thread ${main.toFixed(1)}, audit worker ${worker.toFixed(1)} (other CPU ${other.toFixed(2)} cores)`,
          );
        }
      }
    }
  }
  const median = (list: number[]) => {
    const sorted = [...list].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  console.log(
    "\n| tree | request | audit | server CPU µs/request (median; runs) | request thread | audit worker | off ÷ this, whole process | off ÷ this, request thread |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const server of servers) {
    for (const kind of ["get", "create"]) {
      const off = median(samples.get(`${server.tree}|${kind}|off`) ?? [Number.NaN]);
      const offMain = median(samples.get(`${server.tree}|${kind}|off|main`) ?? [Number.NaN]);
      for (const level of levels) {
        const list = samples.get(`${server.tree}|${kind}|${level}`) ?? [];
        const m = median(list);
        const main = median(samples.get(`${server.tree}|${kind}|${level}|main`) ?? [Number.NaN]);
        const worker = median(samples.get(`${server.tree}|${kind}|${level}|worker`) ?? [Number.NaN]);
        console.log(
          `| ${server.tree} | ${kind.toUpperCase()} | ${level} | ${m.toFixed(1)} (${list.map((v) => v.toFixed(0)).join(", ")}) | ${main.toFixed(1)} | ${worker.toFixed(1)} | ${(off / m).toFixed(2)} | ${(offMain / main).toFixed(2)} |`,
        );
      }
    }
  }
  console.log(
    `\nOther CPU during runs (cores, other processes on this machine): median ${median(others).toFixed(2)}, max ${Math.max(...others).toFixed(2)}`,
  );
} finally {
  for (const server of servers) {
    await server.platform.stop();
    await rm(server.dir, { recursive: true, force: true });
  }
}
