// CPU profiles of the platform's GET and CREATE paths under load (issue 36): one platform per path, warmed for 2 s,
// then profiled through its inspector (SIGUSR1, port 9229) while autocannon loads it for --duration seconds, and
// summarised: self time by file (our modules, each library, node internals, GC) and the heaviest functions.
//
//   node bench/profile.ts [--only get,create,watch] [--duration 8] [--top 25] [--keep DIR] [--by time|samples]
//
// watch: 1,000 watchers of users (opened before the profiler starts) and --duration × 20 merge PATCHes at 20/s
// (bench/lib/watch-load.ts, in this process on the load CPU); the profile covers the updates only.
//
// The .cpuprofile files stay in DIR (default a temporary directory) for Chrome DevTools or speedscope.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchUser, USERS_PATH } from "./lib/api.ts";
import { type CpuProfile, summariseProfile } from "./lib/cpu-profile.ts";
import { profileDuring } from "./lib/inspector.ts";
import { type LoadOptions, load } from "./lib/load.ts";
import { LOAD_CPU, startBenchPlatform } from "./lib/platform.ts";
import { pinToCpu } from "./lib/proc.ts";
import { runWatchLoad } from "./lib/watch-load.ts";

const { values } = parseArgs({
  options: {
    only: { type: "string", default: "get,create" },
    duration: { type: "string", default: "8" },
    top: { type: "string", default: "25" },
    keep: { type: "string" },
    // Shares weighted by time between samples (default) or counted by sample (see lib/cpu-profile.ts).
    by: { type: "string", default: "time" },
  },
});

const ROOT = new URL("..", import.meta.url).pathname;
const PROFILED_USER = "bench-prof";
pinToCpu(process.pid, LOAD_CPU);

async function profilePath(name: "get" | "create", dir: string): Promise<CpuProfile> {
  const platform = await startBenchPlatform();
  const { pid, api } = platform;
  try {
    await api.expect(201, "POST", USERS_PATH, benchUser({ name: PROFILED_USER }));
    const get = name === "get";
    const options: LoadOptions = {
      url: platform.url,
      token: platform.token,
      path: get ? `${USERS_PATH}/${PROFILED_USER}` : USERS_PATH,
      method: get ? "GET" : "POST",
      body: get ? undefined : JSON.stringify(benchUser({ generateName: "bench-" })),
      connections: get ? 32 : 64,
      duration: 2,
      serverPid: pid,
    };
    await load(options);
    const profiled = await profileDuring(pid, async (start) => {
      await start();
      return load({ ...options, duration: Number(values.duration) });
    });
    if (!profiled) throw new Error("the server's inspector could not be opened (port 9229 taken?)");
    const result = profiled.result;
    const seconds = Number(values.duration);
    console.log(
      `\n## ${name.toUpperCase()}: ${result.responses} responses, server ${Math.round(((result.serverCpu ?? 0) * result.seconds * 1e6) / Math.max(1, result.ok))} µs/req`,
    );
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${name}.cpuprofile`);
    await writeFile(file, JSON.stringify(profiled.profile));
    console.log(`profile: ${file} (${seconds} s)`);
    return profiled.profile as CpuProfile;
  } finally {
    await platform.stop();
  }
}

const WATCHERS = 1000;
const WATCH_RATE = 20;

async function profileWatch(dir: string): Promise<CpuProfile> {
  const platform = await startBenchPlatform();
  const { pid, api } = platform;
  try {
    await api.expect(201, "POST", USERS_PATH, benchUser({ name: PROFILED_USER }));
    const list = JSON.parse((await api.request("GET", USERS_PATH)).body) as { metadata: { resourceVersion: string } };
    const updates = Number(values.duration) * WATCH_RATE;
    const profiled = await profileDuring(pid, (start) =>
      runWatchLoad({
        url: platform.url,
        token: platform.token,
        ca: platform.ca,
        user: PROFILED_USER,
        listRevision: list.metadata.resourceVersion,
        watchers: WATCHERS,
        updates,
        rate: WATCH_RATE,
        onPhase: (phase) => void (phase === "start" ? start() : undefined),
      }),
    );
    if (!profiled) throw new Error("the server's inspector could not be opened (port 9229 taken?)");
    console.log(`\n## WATCH: ${WATCHERS} watchers × ${updates} updates`);
    await mkdir(dir, { recursive: true });
    const file = join(dir, "watch.cpuprofile");
    await writeFile(file, JSON.stringify(profiled.profile));
    console.log(`profile: ${file}`);
    return profiled.profile as CpuProfile;
  } finally {
    await platform.stop();
  }
}

const dir = values.keep ?? (await mkdtemp(join(tmpdir(), "vcp-profile-")));
try {
  for (const name of values.only.split(",")) {
    if (name !== "get" && name !== "create" && name !== "watch") throw new Error(`unknown path ${name}`);
    const profile = name === "watch" ? await profileWatch(dir) : await profilePath(name, dir);
    const by = values.by === "samples" ? "samples" : "time";
    console.log(summariseProfile(profile, { root: ROOT, top: Number(values.top), by }));
  }
} finally {
  if (!values.keep) await rm(dir, { recursive: true, force: true });
}
