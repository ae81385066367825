// What checking open watches' callers again costs the platform (src/http/watch-caller-check.ts): its CPU per caller
// change (a team patch, which every open watch checks) with N open watches against none, before and after.
//   npx node bench/watch-caller-checks.ts [--watches 1000] [--changes 100]
// Method: the platform from the sources as a child process; N watches of projects over their own TLS connections,
// one user's key; CPU from /proc, 1.5 s of settling before and after each series of changes.

import type { ClientRequest } from "node:http";
import { Agent, request } from "node:https";
import { parseArgs } from "node:util";
import { API, AuthClient } from "../test/support/auth-client.ts";
import { startPlatformProcess } from "../test/support/platform-process.ts";
import { cpuTimeMs } from "./lib/proc.ts";

const { values } = parseArgs({
  options: { watches: { type: "string", default: "1000" }, changes: { type: "string", default: "100" } },
});
const WATCHES = Number(values.watches);
const CHANGES = Number(values.changes);
const MERGE = "application/merge-patch+json";
const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

const platform = await startPlatformProcess();
const client = new AuthClient(platform.url, platform.caPem);
const admin = platform.adminKey;
const pid = platform.child.pid ?? 0;
await client.createUser(admin, "watcher");
const key = await client.createKey(admin, "key-watcher", { user: "watcher" });
await client.createTeam(admin, "elsewhere", {});

/** Platform CPU ms per change over CHANGES patches of a team the watcher is not in. */
async function perChange(tag: string): Promise<number> {
  await settle();
  const before = cpuTimeMs(pid);
  for (let i = 0; i < CHANGES; i++) {
    const reply = await client.send("PATCH", `${API}/teams/elsewhere`, {
      token: admin,
      contentType: MERGE,
      body: { spec: { description: `${tag}-${i}` } },
    });
    if (reply.status !== 200) throw new Error(reply.body);
  }
  await settle();
  return (cpuTimeMs(pid) - before) / CHANGES;
}

/** Opens WATCHES watches of projects as the watcher; resolves once all streams are open. */
async function openWatches(): Promise<ClientRequest[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, ca: platform.caPem });
  const requests: ClientRequest[] = [];
  const path = `${platform.url}${API}/projects?watch=1&timeoutSeconds=86400`;
  await Promise.all(
    Array.from(
      { length: WATCHES },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = request(path, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
            if (res.statusCode !== 200) reject(new Error(`watch: ${res.statusCode}`));
            res.resume();
            resolve();
          });
          req.on("error", reject);
          req.end();
          requests.push(req);
        }),
    ),
  );
  return requests;
}

const without = await perChange("before");
const open = await openWatches();
const withWatches = await perChange("with");
for (const req of open) req.destroy();
const after = await perChange("after");
const baseline = (without + after) / 2;
console.log(
  JSON.stringify({
    watches: WATCHES,
    changes: CHANGES,
    platformCpuMsPerChange: { without: [round(without), round(after)], withWatches: round(withWatches) },
    perWatchPerChangeUs: round(((withWatches - baseline) * 1000) / WATCHES),
  }),
);
client.close();
await platform.stop();

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
