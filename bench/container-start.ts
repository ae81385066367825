// The container image (issue 37): its size, how long `npm run image` takes, and how long the platform takes from start
// to ready in a container against the process in the same run. Interleaved rounds of
//   A. baseline: the process as `npm start` runs it (Node 24 runs bin/virtualcluster.js from the checkout);
//   B. the image: `podman run -d --network host --read-only` with a fresh volume;
// each `platform start` on a fresh data directory (a first start: CA, keys and admin made) on a free port, timed from
// the spawn until GET /readyz answers 200 (polled every 25 ms), with the server's CPU time at that moment from /proc
// (for the container: its node process as the host sees it), then stopped with SIGTERM and timed until it exits.
//
//   node bench/container-start.ts [--rounds 5] [--build]     (--build: first time a full `npm run image -- --force`)

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildImage } from "../container/build-image.ts";
import { containersMissing, podman, podmanEnv } from "../test/support/containers.ts";
import { cpuTimeMs } from "./lib/proc.ts";
import { percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, build: { type: "boolean", default: false } },
});
const rounds = Number(values.rounds);
const BIN = new URL("../bin/virtualcluster.js", import.meta.url).pathname;

const missing = containersMissing();
if (missing) {
  process.stderr.write(`cannot run containers here: ${missing}\n`);
  process.exit(1);
}
// podman (and the build) read this machine's settings from CONTAINERS_CONF.
process.env.CONTAINERS_CONF = podmanEnv().CONTAINERS_CONF;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (samples: number[]) => percentile(Float64Array.from(samples).sort(), 50);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function ready(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/readyz", rejectUnauthorized: false, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode === 200));
      },
    );
    req.on("error", () => resolve(false));
    req.end();
  });
}

interface Sample {
  /** For the container: until `podman run --detach` returned (the container's process started). */
  runMs?: number;
  readyMs: number;
  cpuMs: number;
  stopMs: number;
}

async function untilReady(port: number, started: bigint): Promise<number> {
  const deadline = Date.now() + 120_000;
  while (!(await ready(port))) {
    if (Date.now() > deadline) throw new Error(`not ready on ${port} after 120 s`);
    await sleep(25);
  }
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function processRound(): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), "vc-bench-start-"));
  const port = await freePort();
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, "platform", "start", "--data-dir", dir, "--port", String(port)],
    {
      stdio: "ignore",
      env: { ...process.env, LOG_LEVEL: "warn" },
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const readyMs = await untilReady(port, started);
  const cpuMs = cpuTimeMs(child.pid as number);
  const stopping = process.hrtime.bigint();
  child.kill("SIGTERM");
  await exited;
  const stopMs = Number(process.hrtime.bigint() - stopping) / 1e6;
  rmSync(dir, { recursive: true, force: true });
  return { readyMs, cpuMs, stopMs };
}

async function containerRound(image: string, round: number): Promise<Sample> {
  const name = `vc-bench-start-${process.pid}-${round}`;
  const volume = `${name}-data`;
  const port = await freePort();
  const started = process.hrtime.bigint();
  await podman([
    ...["run", "--detach", `--name=${name}`, "--network=host", "--read-only", "--env=LOG_LEVEL=warn"],
    `--volume=${volume}:/var/lib/virtualcluster`,
    image,
    ...["platform", "start", "--data-dir", "/var/lib/virtualcluster", "--port", String(port)],
  ]);
  const runMs = Number(process.hrtime.bigint() - started) / 1e6;
  const pid = Number((await podman(["inspect", "--format", "{{.State.Pid}}", name])).trim());
  const readyMs = await untilReady(port, started);
  const cpuMs = cpuTimeMs(pid);
  const stopping = process.hrtime.bigint();
  await podman(["stop", "--time=30", name]);
  const stopMs = Number(process.hrtime.bigint() - stopping) / 1e6;
  await podman(["rm", name]);
  await podman(["volume", "rm", volume]);
  return { runMs, readyMs, cpuMs, stopMs };
}

/** CPU time of this process and the children it has waited for (the build's tools), from /proc/self/stat, in ms. */
function ownAndChildrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime, stime, cutime, cstime (fields 14-17), in clock ticks of 10 ms.
  return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0) * 10;
}

/** The sizes of the image's three layers (the ADD steps), bottom first, as podman shows them. */
async function layerSizes(ref: string): Promise<string> {
  const history = await podman(["history", "--format", "{{.Size}}|{{.CreatedBy}}", ref]);
  return history
    .split("\n")
    .filter((line) => line.includes(" ADD "))
    .map((line) => line.split("|")[0])
    .reverse()
    .join(" + ");
}

async function main(): Promise<void> {
  let full: { seconds: number; cpuSeconds: number } | undefined;
  if (values.build) {
    const cpuBefore = ownAndChildrenCpuMs();
    const built = await buildImage({ force: true });
    full = { seconds: built.buildSeconds ?? 0, cpuSeconds: (ownAndChildrenCpuMs() - cpuBefore) / 1000 };
  }
  const cachedStart = process.hrtime.bigint();
  const image = await buildImage();
  const cachedSeconds = Number(process.hrtime.bigint() - cachedStart) / 1e9;
  const layers = await layerSizes(image.ref);

  const processes: Sample[] = [];
  const containers: Sample[] = [];
  await processRound();
  await containerRound(image.ref, -1);
  for (let round = 0; round < rounds; round++) {
    // Alternate the order so a slow moment on the shared machine does not always fall on the same side.
    if (round % 2 === 0) {
      processes.push(await processRound());
      containers.push(await containerRound(image.ref, round));
    } else {
      containers.push(await containerRound(image.ref, round));
      processes.push(await processRound());
    }
  }
  const row = (label: string, samples: Sample[]) =>
    `${label.padEnd(34)} ${median(samples.map((s) => s.readyMs))
      .toFixed(0)
      .padStart(8)} ms ${median(samples.map((s) => s.cpuMs))
      .toFixed(0)
      .padStart(8)} ms ${median(samples.map((s) => s.stopMs))
      .toFixed(0)
      .padStart(8)} ms`;
  const ratio = (pick: (s: Sample) => number) =>
    (median(containers.map(pick)) / median(processes.map(pick))).toFixed(2);
  process.stdout.write(
    `image ${image.ref}: ${(image.sizeBytes / 1e6).toFixed(1)} MB uncompressed (layers ${layers})\n` +
      (full !== undefined
        ? `npm run image -- --force (full build): ${full.seconds.toFixed(1)} s, ${full.cpuSeconds.toFixed(1)} s of CPU\n`
        : "") +
      `npm run image with the image up to date: ${cachedSeconds.toFixed(1)} s\n` +
      `rounds: ${rounds} (medians)                  start→ready   CPU to ready   SIGTERM→exit\n` +
      `${row("A. process (bin/virtualcluster.js)", processes)}\n` +
      `${row("B. container (podman run)", containers)}\n` +
      `B/A: ready ${ratio((s) => s.readyMs)}, CPU ${ratio((s) => s.cpuMs)}, stop ${ratio((s) => s.stopMs)}\n` +
      `B: podman run --detach returned after ${median(containers.map((s) => s.runMs ?? 0)).toFixed(0)} ms (median)\n`,
  );
}

await main();
