// The runtime's API client (issue 32): client CPU per POST through KubeHttp over its own kept-alive connections
// (kept-alive-connections.ts) against the same KubeHttp sending through Node's https.request (an access without
// connect(), as a kubeconfig client-node handles gets), same server, same run, alternating rounds.
// Run: node bench/kube-client.ts [--posts 3000] [--rounds 3] [--workers 16]
//
// Method: a host cluster API server (`virtualcluster apiserver`) as a child process over HTTPS; `--workers` writers
// in this process POST Endpoints (the syncer's write in bench/runtime-sync.ts) until `--posts` are created; the
// measure is this process's CPU (process.cpuUsage(): the client's JSON, HTTP and TLS work, its socket writes) per
// POST. The server's CPU is not part of it. The machine is shared: compare the two clients within a round.

import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKubeAccess } from "../src/virtualcluster/kube/kube-access.ts";
import { KubeHttp } from "../src/virtualcluster/kube/kube-http.ts";
import { round } from "./lib/stats.ts";

const MAIN = new URL("../bin/virtualcluster.js", import.meta.url).pathname;
const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const POSTS = argument("--posts", 3000);
const ROUNDS = argument("--rounds", 3);
const WORKERS = argument("--workers", 16);
const NAMESPACE = "bench";

async function startHost(dataDir: string): Promise<{ kubeconfig: string; stop(): void }> {
  const child = spawn(process.execPath, [MAIN, "apiserver", "--data-dir", dataDir, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "warn" },
  });
  process.once("exit", () => child.kill("SIGKILL"));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /Admin kubeconfig: (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`apiserver exited with ${code}`)));
  });
  return { kubeconfig, stop: () => child.kill("SIGTERM") };
}

const endpoints = (name: string) => ({
  metadata: { name, namespace: NAMESPACE, labels: { app: name } },
  subsets: [{ addresses: [{ ip: "10.0.0.1", hostname: "pod-a" }], ports: [{ name: "http", port: 80 }] }],
});

/** Client CPU per POST (µs) of `POSTS` creates by WORKERS concurrent writers. */
async function postBurst(http: KubeHttp, prefix: string): Promise<number> {
  let next = 0;
  const writer = async () => {
    while (next < POSTS) {
      const name = `${prefix}-${next++}`;
      await http.request({ method: "POST", path: `/api/v1/namespaces/${NAMESPACE}/endpoints`, body: endpoints(name) });
    }
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: WORKERS }, writer));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / POSTS;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "bench-kube-client-"));
  const host = await startHost(join(dir, "host"));
  const access = await loadKubeAccess({ file: host.kubeconfig });
  const own = new KubeHttp(access);
  const viaHttps = new KubeHttp({ server: access.server, requestOptions: () => access.requestOptions(), close() {} });
  await own.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: NAMESPACE } } });
  const rounds: { ownMicros: number; httpsMicros: number; ratio: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which client goes first, so neither always meets the fuller store.
    const order = i % 2 === 0 ? ["own", "https"] : ["https", "own"];
    const micros: Record<string, number> = {};
    for (const which of order) micros[which] = await postBurst(which === "own" ? own : viaHttps, `${which}-${i}`);
    rounds.push({
      ownMicros: round(micros.own, 1),
      httpsMicros: round(micros.https, 1),
      ratio: round(micros.own / micros.https, 2),
    });
    process.stderr.write(`[bench/kube-client] round ${i + 1}: ${JSON.stringify(rounds.at(-1))}\n`);
  }
  own.close();
  host.stop();
  await rm(dir, { recursive: true, force: true });
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const summary = {
    ownMicrosMedian: median(rounds.map((r) => r.ownMicros)),
    httpsMicrosMedian: median(rounds.map((r) => r.httpsMicros)),
    ratioMedian: median(rounds.map((r) => r.ratio)),
  };
  console.log(JSON.stringify({ posts: POSTS, workers: WORKERS, rounds, summary }, null, 2));
}

await main();
