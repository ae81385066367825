// Cluster API server (core/v1 + rbac): GET and CREATE of Endpoints per second, against a bare HTTPS baseline
// measured in the same run.
//
// Method: `virtualcluster apiserver` runs as a child process on a fresh data directory, pinned to CPU 0; autocannon
// runs here, pinned to CPU 1. The baseline is bench/baseline-server.ts (a bare node:https server, also pinned to
// CPU 0, same serving certificate and key) answering every GET with exactly the bytes of the server's Endpoints GET
// response. Rounds alternate baseline GET, Endpoints GET (admin token, RBAC bypass for system:masters), Endpoints
// CREATE (POST with generateName, durable: synchronous=FULL group commit); each row reports the best
// round (load from elsewhere on the machine only ever lowers a round) and every round's rate.
//
//   node bench/cluster-apiserver.ts [--duration seconds] [--rounds n]

import { spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startClusterApiServerProcess } from "../test/support/cluster-apiserver-process.ts";
import { ApiClient } from "./lib/api.ts";
import { type LoadResult, warmThenLoad } from "./lib/load.ts";
import { LOAD_CPU, SERVER_CPU } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { formatInt, formatMs, formatRatio } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "5" }, rounds: { type: "string", default: "3" } },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const GET_CONNECTIONS = 32;
const CREATE_CONNECTIONS = 64;
const NAMESPACE = "bench";
const ENDPOINTS = `/api/v1/namespaces/${NAMESPACE}/endpoints`;
const GET_PATH = `${ENDPOINTS}/bench-get`;
const BASELINE = new URL("./baseline-server.ts", import.meta.url).pathname;

const endpoints = (name: { name: string } | { generateName: string }) => ({
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: { ...name, namespace: NAMESPACE, labels: { "bench.platform.sh/kind": "load" } },
  subsets: [
    {
      addresses: [
        { ip: "10.0.0.1", targetRef: { kind: "Pod", name: "web-1", namespace: NAMESPACE } },
        { ip: "10.0.0.2", targetRef: { kind: "Pod", name: "web-2", namespace: NAMESPACE } },
      ],
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    },
  ],
});

pinToCpu(process.pid, LOAD_CPU);
const log = (message: string) => process.stderr.write(`${message}\n`);

const server = await startClusterApiServerProcess();
const pid = server.child.pid ?? 0;
pinToCpu(pid, SERVER_CPU);
const token = (await readFile(join(server.dataDir, "admin-token"), "utf8")).trim();
const api = new ApiClient(server.url, token, server.caPem);
const bodyFile = join(tmpdir(), `vc-bench-endpoints-${process.pid}.json`);
const samples: Record<"baseline" | "get" | "create", LoadResult[]> = { baseline: [], get: [], create: [] };
let baseline: ReturnType<typeof spawn> | undefined;
try {
  await api.expect(201, "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NAMESPACE },
  });
  await api.expect(201, "POST", ENDPOINTS, endpoints({ name: "bench-get" }));
  const body = (await api.request("GET", GET_PATH)).body;
  await writeFile(bodyFile, body);
  const pki = join(server.dataDir, "pki");
  baseline = spawn(process.execPath, [BASELINE, join(pki, "serving.crt"), join(pki, "serving.key"), bodyFile], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const child = baseline;
  const baselinePort = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`baseline server exited with ${code}`)));
  });
  pinToCpu(child.pid ?? 0, SERVER_CPU);
  log(`Endpoints GET body: ${Buffer.byteLength(body)} bytes`);

  let round = 0;
  for (round = 1; round <= rounds; round++) {
    log(`round ${round}/${rounds}`);
    samples.baseline.push(
      await warmThenLoad(
        {
          url: `https://127.0.0.1:${baselinePort}`,
          token,
          path: GET_PATH,
          connections: GET_CONNECTIONS,
          duration,
          serverPid: child.pid,
        },
        1,
      ),
    );
    samples.get.push(
      await warmThenLoad(
        { url: server.url, token, path: GET_PATH, connections: GET_CONNECTIONS, duration, serverPid: pid },
        1,
      ),
    );
    samples.create.push(
      await warmThenLoad(
        {
          url: server.url,
          token,
          method: "POST",
          path: ENDPOINTS,
          body: JSON.stringify(endpoints({ generateName: `r${round}-` })),
          connections: CREATE_CONNECTIONS,
          duration,
          serverPid: pid,
        },
        0,
      ),
    );
  }
} finally {
  api.close();
  if (baseline && baseline.exitCode === null) {
    const exited = new Promise((resolve) => baseline?.once("exit", resolve));
    baseline.kill("SIGTERM");
    await exited;
  }
  await server.stop();
  await rm(bodyFile, { force: true });
}

const best = (results: LoadResult[]) => results.reduce((a, b) => (b.rate > a.rate ? b : a));
const base = best(samples.baseline).rate;
const rows: [string, number, LoadResult[]][] = [
  ["baseline: bare node:https GET, same body", GET_CONNECTIONS, samples.baseline],
  ["GET Endpoints (admin token)", GET_CONNECTIONS, samples.get],
  ["CREATE Endpoints (POST, durable)", CREATE_CONNECTIONS, samples.create],
];
console.log(`\nCluster API server: best of ${rounds} rounds of ${duration} s\n`);
console.log(
  "| measurement | conns | req/s | vs baseline | p50 ms | p99 ms | server CPU | non-2xx | all rounds req/s |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const [name, connections, results] of rows) {
  const result = best(results);
  const cpu = result.serverCpu === undefined ? "-" : `${Math.round(result.serverCpu * 100)}%`;
  const failed = result.responses - result.ok;
  console.log(
    `| ${name} | ${connections} | ${formatInt(result.rate)} | ${formatRatio(result.rate / base)} | ${formatMs(result.latency.p50)} | ${formatMs(result.latency.p99)} | ${cpu} | ${failed} | ${results.map((r) => formatInt(r.rate)).join(" / ")} |`,
  );
}
