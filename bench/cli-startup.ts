// Start-up cost of the `virtualcluster` command (issue 22): what the launcher adds when the machine's `node` is older
// than 24 and the command runs itself again on the Node 24 npm installed with the package. Interleaved rounds of
//   A. baseline: Node 24 runs bin/virtualcluster.js directly (no relaunch);
//   B. the machine's node (older) runs bin/virtualcluster.js, which relaunches on Node 24;
// each `virtualcluster version` (the whole command: module loading, one line of output, exit). Reports the median
// wall time of each and the ratio B/A.
//
//   node bench/cli-startup.ts [--rounds n] [--old-node /usr/bin/node]

import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "15" }, "old-node": { type: "string", default: "/usr/bin/node" } },
});
const rounds = Number(values.rounds);
const oldNode = values["old-node"] as string;
const BIN = new URL("../bin/virtualcluster.js", import.meta.url).pathname;

const oldVersion = spawnSync(oldNode, ["--version"], { encoding: "utf8" }).stdout.trim();
if (!oldVersion || Number(oldVersion.slice(1).split(".")[0]) >= 24) {
  process.stderr.write(`${oldNode} is not a Node older than 24 (${oldVersion || "missing"}): nothing to compare\n`);
  process.exit(1);
}

function timed(node: string): number {
  const start = process.hrtime.bigint();
  const run = spawnSync(node, [BIN, "version"], {
    encoding: "utf8",
    env: { ...process.env, VIRTUALCLUSTER_HOME: "/nonexistent" },
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0 || !/Node\.js v24\./.test(run.stdout)) throw new Error(`${node}: ${run.stdout}${run.stderr}`);
  return ms;
}

const direct: number[] = [];
const relaunched: number[] = [];
timed(process.execPath);
timed(oldNode);
for (let round = 0; round < rounds; round++) {
  // Alternate the order so a slow moment on the shared machine does not always fall on the same side.
  if (round % 2 === 0) {
    direct.push(timed(process.execPath));
    relaunched.push(timed(oldNode));
  } else {
    relaunched.push(timed(oldNode));
    direct.push(timed(process.execPath));
  }
}
const median = (samples: number[]) => percentile(Float64Array.from(samples).sort(), 50);
const a = median(direct);
const b = median(relaunched);
process.stdout.write(
  `rounds: ${rounds}\n` +
    `A. Node ${process.versions.node} runs the command directly:      median ${a.toFixed(0)} ms\n` +
    `B. Node ${oldVersion.slice(1)} runs it, relaunched on Node 24: median ${b.toFixed(0)} ms\n` +
    `B/A: ${(b / a).toFixed(2)} (+${(b - a).toFixed(0)} ms)\n`,
);
