// Where the platform's memory goes (issue 36): starts a platform on a fresh data directory and prints, idle after
// start and (with --users N) after storing N users and a GET run, the resident set by mapping kind (smaps), V8's
// heap spaces and code, external and array buffers, the SQLite page cache and the threads that run.
//
//   node bench/memory-breakdown.ts [--users 10000] [--duration 8] [--main OTHER_TREE/src/cli/main.ts]
//
// The V8 figures come from the inspector (SIGUSR1, port 9229), opened only after the last RSS reading.

import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { benchUser, countUsers, USERS_PATH } from "./lib/api.ts";
import { inspectorEvaluate } from "./lib/inspector.ts";
import { load, warmThenLoad } from "./lib/load.ts";
import { memoryMap } from "./lib/memory-map.ts";
import { startBenchPlatform } from "./lib/platform.ts";
import { memoryStatus } from "./lib/proc.ts";
import { formatMiB } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "0" },
    duration: { type: "string", default: "8" },
    main: { type: "string" },
  },
});
const users = Number(values.users);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function threads(pid: number): string {
  const names = readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim());
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, n]) => `${name}×${n}`).join(", ");
}

function printMap(label: string, pid: number): void {
  const status = memoryStatus(pid);
  const map = memoryMap(pid);
  console.log(`\n### ${label}: VmRSS ${formatMiB(status.vmRssKiB)} (peak ${formatMiB(status.vmHwmKiB)})`);
  console.log(`threads: ${threads(pid)}`);
  console.log("| mapping | RSS |\n|---|---|");
  for (const [name, kib] of Object.entries(map.byCategory).sort((a, b) => b[1] - a[1])) {
    console.log(`| ${name} | ${formatMiB(kib)} |`);
  }
}

const V8_EXPRESSION = `JSON.stringify((() => {
  const v8 = process.getBuiltinModule("v8");
  return { memory: process.memoryUsage(), spaces: v8.getHeapSpaceStatistics(), code: v8.getHeapCodeStatistics() };
})())`;

interface V8Facts {
  memory: NodeJS.MemoryUsage;
  spaces: { space_name: string; space_size: number; space_used_size: number; physical_space_size: number }[];
  code: { code_and_metadata_size: number; bytecode_and_metadata_size: number; external_script_source_size: number };
}

function printV8(facts: V8Facts): void {
  const mib = (bytes: number) => formatMiB(bytes / 1024);
  console.log("\n| V8 | resident | used |\n|---|---|---|");
  for (const space of facts.spaces) {
    console.log(`| ${space.space_name} | ${mib(space.physical_space_size)} | ${mib(space.space_used_size)} |`);
  }
  console.log(`| code and metadata (in the spaces above) | | ${mib(facts.code.code_and_metadata_size)} |`);
  console.log(`| bytecode and metadata | | ${mib(facts.code.bytecode_and_metadata_size)} |`);
  console.log(`| script sources | | ${mib(facts.code.external_script_source_size)} |`);
  console.log(`| external (Buffers, TLS, native objects) | | ${mib(facts.memory.external)} |`);
  console.log(`| of which array buffers | | ${mib(facts.memory.arrayBuffers)} |`);
}

const platform = await startBenchPlatform(undefined, { main: values.main });
try {
  await sleep(1500);
  printMap("idle after start", platform.pid);
  if (users > 0) {
    await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: "bench-mem" }));
    const missing = users - (await countUsers(platform.api));
    await load({
      url: platform.url,
      token: platform.token,
      method: "POST",
      path: USERS_PATH,
      body: JSON.stringify(benchUser({ generateName: "bench-" })),
      connections: 64,
      amount: missing,
      serverPid: platform.pid,
    });
    await sleep(2000);
    printMap(`after creating ${missing} users`, platform.pid);
    const get = await warmThenLoad(
      {
        url: platform.url,
        token: platform.token,
        path: `${USERS_PATH}/bench-mem`,
        connections: 32,
        duration: Number(values.duration),
        serverPid: platform.pid,
      },
      2,
    );
    console.log(`\nGET run: ${get.responses} responses`);
    printMap("after the GET run", platform.pid);
  }
  const facts = (await inspectorEvaluate(platform.pid, V8_EXPRESSION)) as string | undefined;
  if (facts) printV8(JSON.parse(facts) as V8Facts);
  else console.log("\n(V8 figures: inspector not available)");
} finally {
  await platform.stop();
}
