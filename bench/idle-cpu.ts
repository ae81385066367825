// What an idle platform costs (issue 36): starts a platform on a fresh data directory, lets start-up settle, then
// reads its CPU from /proc over a window in which nothing talks to it. With --other, another tree's platform is
// measured the same way, alternately, in the same run.
//
//   node bench/idle-cpu.ts [--rounds 2] [--settle 15] [--seconds 40] [--other OTHER_TREE/src/cli/main.ts]

import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startPlatformProcess } from "../test/support/platform-process.ts";
import { cpuTimeMs } from "./lib/proc.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    settle: { type: "string", default: "15" },
    seconds: { type: "string", default: "40" },
    other: { type: "string" },
  },
});
const settleMs = Number(values.settle) * 1000;
const windowMs = Number(values.seconds) * 1000;
const trees: { name: string; main?: string }[] = [{ name: "this tree" }];
if (values.other) trees.push({ name: values.other, main: values.other });

/** CPU ms per second of an idle platform of `main`, over the window after start-up settled. */
async function idleCpu(main: string | undefined): Promise<number> {
  const platform = await startPlatformProcess({ main });
  try {
    const pid = platform.child.pid as number;
    await sleep(settleMs);
    const before = cpuTimeMs(pid);
    await sleep(windowMs);
    return (cpuTimeMs(pid) - before) / (windowMs / 1000);
  } finally {
    await platform.stop();
  }
}

const results = new Map<string, number[]>(trees.map((tree) => [tree.name, []]));
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const tree of trees) {
    const msPerSecond = await idleCpu(tree.main);
    results.get(tree.name)?.push(msPerSecond);
    console.log(`round ${round} ${tree.name}: ${msPerSecond.toFixed(1)} ms of CPU per second idle`);
  }
}
console.log(
  `\nIdle platform, ${values.seconds} s after ${values.settle} s of settling: CPU ms per second (cores × 1,000)`,
);
for (const [name, samples] of results) console.log(`- ${name}: ${samples.map((ms) => ms.toFixed(1)).join(", ")}`);
