// Kubeconfig issuance (issue 5), in one run against one platform child process pinned to CPU 0 (autocannon here,
// pinned to CPU 1). The caller is a plain user who is an edit member of the instance's project (authorization goes
// through the project index), with an unscoped key. Rounds alternate the three measurements and the best round of
// each is reported (load from elsewhere on the machine only ever lowers a round):
//   1. baseline: GET of the instance (authn, authz, one storage read, JSON);
//   2. POST .../kubeconfig, token form: a new OwnedAccessKey per request (digest, durable write, YAML);
//   3. POST .../kubeconfig with clientCert: a new P-256 key pair and a certificate signed by the instance's CA.
// Token-form keys accumulate over the run (thousands of stored keys by the end), as they would in use.
//
//   node bench/kubeconfigs.ts [--duration seconds] [--rounds n] [--connections n]

import { parseArgs } from "node:util";
import { GROUP_VERSION } from "./lib/api.ts";
import { type LoadResult, warmThenLoad } from "./lib/load.ts";
import { LOAD_CPU, startBenchPlatform } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { formatInt, formatMs, formatRatio } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const API = `/apis/${GROUP_VERSION}`;
const INSTANCE = `${API}/namespaces/p-bench/virtualclusterinstances/vc1`;

pinToCpu(process.pid, LOAD_CPU);
const log = (message: string) => process.stderr.write(`${message}\n`);

const platform = await startBenchPlatform();
const samples: LoadResult[][] = [[], [], []];
try {
  const { api } = platform;
  await api.expect(201, "POST", `${API}/users`, {
    apiVersion: GROUP_VERSION,
    kind: "User",
    metadata: { name: "bench" },
    spec: { groups: ["devs"] },
  });
  const key = await api.expect<{ spec: { key: string } }>(201, "POST", `${API}/ownedaccesskeys`, {
    apiVersion: GROUP_VERSION,
    kind: "OwnedAccessKey",
    metadata: { name: "bench-key" },
    spec: { user: "bench", displayName: "bench" },
  });
  await api.expect(201, "POST", `${API}/projects`, {
    apiVersion: GROUP_VERSION,
    kind: "Project",
    metadata: { name: "bench" },
    spec: { members: [{ kind: "User", name: "bench", clusterRole: "edit" }] },
  });
  await api.expect(201, "POST", `${API}/namespaces/p-bench/virtualclusterinstances`, {
    apiVersion: GROUP_VERSION,
    kind: "VirtualClusterInstance",
    metadata: { name: "vc1" },
    spec: { template: { accessPoint: { ingress: { enabled: true, host: "vc1.bench.test" } } } },
  });
  const run = (method: string, path: string, body?: unknown) =>
    warmThenLoad(
      {
        url: platform.url,
        token: key.spec.key,
        method,
        path,
        body: body === undefined ? undefined : JSON.stringify(body),
        connections,
        duration,
        serverPid: platform.pid,
      },
      1,
    );
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round}/${rounds}`);
    samples[0].push(await run("GET", INSTANCE));
    samples[1].push(await run("POST", `${INSTANCE}/kubeconfig`, { spec: {} }));
    samples[2].push(await run("POST", `${INSTANCE}/kubeconfig`, { spec: { clientCert: true } }));
  }
} finally {
  await platform.stop();
}

const best = (results: LoadResult[]) => results.reduce((a, b) => (b.rate > a.rate ? b : a));
const names = ["GET instance (baseline)", "POST kubeconfig, token form", "POST kubeconfig, clientCert"];
const base = best(samples[0]).rate;
console.log(`\nKubeconfig issuance: best of ${rounds} rounds of ${duration} s, ${connections} connections\n`);
console.log("| measurement | req/s | vs GET | p50 ms | p99 ms | server CPU | all rounds req/s | non-2xx |");
console.log("|---|---|---|---|---|---|---|---|");
samples.forEach((results, i) => {
  const result = best(results);
  const cpu = result.serverCpu === undefined ? "-" : `${Math.round(result.serverCpu * 100)}%`;
  const failed = result.responses - result.ok;
  console.log(
    `| ${names[i]} | ${formatInt(result.rate)} | ${formatRatio(result.rate / base)} | ${formatMs(result.latency.p50)} | ${formatMs(result.latency.p99)} | ${cpu} | ${results.map((r) => formatInt(r.rate)).join(" / ")} | ${failed} |`,
  );
});
