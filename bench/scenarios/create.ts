// 4. CREATE users via POST with generateName at concurrency (goal: at least 5,000/s), in the store's default
// durability mode, then a kill -9 check: a fresh platform takes concurrent creates with unique names, is SIGKILLed
// mid-load, restarts on the same data directory, and every create the clients saw acknowledged must be there.

import { readFile } from "node:fs/promises";
import { ApiClient, benchUser, countUsers, USERS_PATH } from "../lib/api.ts";
import { load } from "../lib/load.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { cpuRatio, LOAD_COLUMNS, loadData, loadRow, type Scenario } from "../lib/scenario.ts";
import { formatInt, formatRatio } from "../lib/stats.ts";

export const GOAL_CREATES_PER_SECOND = 5000;
/** Issue 36: a durable create costs at most this many times the bare server's CPU per GET. */
export const GOAL_CREATE_CPU_RATIO = 4;
const CONNECTIONS = 64;
const KILL_AFTER_MS = 1500;

const SQLITE_STORE = new URL("../../src/storage/sqlite/sqlite-store.ts", import.meta.url).pathname;

/** Lets requests the load generator abandoned at its end finish on the server. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

/** The synchronous mode the platform's store opens with unless told otherwise (read from the source). */
async function defaultSynchronousMode(): Promise<string> {
  const source = await readFile(SQLITE_STORE, "utf8");
  return /options\.synchronous \?\? "(\w+)"/.exec(source)?.[1] ?? "unknown";
}

interface DurabilityCheck {
  acknowledged: number;
  storedAfterRestart: number;
  /** Committed but the client never saw the answer (in flight at the kill): allowed. */
  unacknowledgedButStored: number;
  /** Acknowledged but missing after the restart: must be 0. */
  lost: number;
  killedAfterMs: number;
}

async function killNineCheck(): Promise<DurabilityCheck> {
  const platform = await startBenchPlatform();
  const dataDir = platform.process.dataDir;
  const client = new ApiClient(platform.url, platform.token, platform.ca, CONNECTIONS);
  const acknowledged = new Set<string>();
  let next = 0;
  let killed = false;
  const writers = Array.from({ length: CONNECTIONS }, async () => {
    while (!killed) {
      const name = `durable-${next++}`;
      try {
        const res = await client.request("POST", USERS_PATH, benchUser({ name }));
        if (res.status === 201) acknowledged.add(name);
      } catch {
        return; // the server is gone
      }
    }
  });
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_MS));
  await platform.kill();
  killed = true;
  const killedAfterMs = performance.now() - started;
  await Promise.all(writers);
  client.close();

  const restarted = await startBenchPlatform(dataDir);
  try {
    const stored = new Set<string>();
    let token = "";
    do {
      const page = await restarted.api.expect<{
        items: { metadata: { name: string } }[];
        metadata: { continue?: string };
      }>(200, "GET", `${USERS_PATH}?limit=1000${token ? `&continue=${encodeURIComponent(token)}` : ""}`);
      for (const item of page.items) if (item.metadata.name.startsWith("durable-")) stored.add(item.metadata.name);
      token = page.metadata.continue ?? "";
    } while (token);
    let lost = 0;
    for (const name of acknowledged) if (!stored.has(name)) lost++;
    return {
      acknowledged: acknowledged.size,
      storedAfterRestart: stored.size,
      unacknowledgedButStored: [...stored].filter((name) => !acknowledged.has(name)).length,
      lost,
      killedAfterMs: Math.round(killedAfterMs),
    };
  } finally {
    await restarted.stop();
  }
}

export const createScenario: Scenario = {
  name: "create",
  title: "CREATE users (POST, generateName)",
  async run(context) {
    const synchronous = await defaultSynchronousMode();
    const platform = await startBenchPlatform();
    const body = JSON.stringify(benchUser({ generateName: "bench-" }));
    const options = {
      url: platform.url,
      token: platform.token,
      method: "POST",
      path: USERS_PATH,
      body,
      connections: CONNECTIONS,
    };
    let result: Awaited<ReturnType<typeof load>>;
    let before: number;
    let after: number;
    try {
      await load({ ...options, duration: context.warmup });
      await settle();
      before = await countUsers(platform.api);
      result = await load({ ...options, duration: context.duration, serverPid: platform.pid });
      await settle();
      after = await countUsers(platform.api);
    } finally {
      await platform.stop();
    }
    const created = result.status["201"] ?? 0;
    // autocannon drops the requests in flight when the time is up; the server still commits them.
    const unacknowledged = after - before - created;
    if (unacknowledged < 0 || unacknowledged > CONNECTIONS) {
      throw new Error(`clients saw ${created} creates acknowledged, but the user count grew by ${after - before}`);
    }
    context.log(`create: ${formatInt(result.rate)}/s; kill -9 check…`);
    const durability = await killNineCheck();
    const conflicts = result.status["409"] ?? 0;
    return {
      name: this.name,
      title: this.title,
      tables: [
        {
          columns: LOAD_COLUMNS,
          rows: [loadRow(`POST users, generateName (${created} created)`, CONNECTIONS, result, context.baseline)],
        },
      ],
      goals: [
        {
          goal: `creates/s ≥ ${formatInt(GOAL_CREATES_PER_SECOND)} (synchronous=${synchronous})`,
          actual: `${formatInt(result.rate)}/s`,
          met: result.rate >= GOAL_CREATES_PER_SECOND,
        },
        {
          goal: `CREATE server CPU/req ≤ ${GOAL_CREATE_CPU_RATIO} × the bare server's GET (issue 36)`,
          actual: formatRatio(cpuRatio(result, context.baseline)),
          met: cpuRatio(result, context.baseline) <= GOAL_CREATE_CPU_RATIO,
        },
        {
          goal: "every acknowledged create survives kill -9",
          actual: `${formatInt(durability.acknowledged)} acknowledged, ${durability.lost} lost`,
          met: durability.lost === 0 && durability.acknowledged > 0,
        },
      ],
      notes: [
        `Durability mode: SQLite WAL, synchronous=${synchronous} (the default of openSqliteStore, which the platform uses), group commit: one fsync per transaction.`,
        `kill -9 check: ${CONNECTIONS} concurrent writers with unique names, SIGKILL after ${durability.killedAfterMs} ms, restart on the same data directory: ${formatInt(durability.acknowledged)} acknowledged, ${formatInt(durability.storedAfterRestart)} stored (${durability.unacknowledgedButStored} committed but unacknowledged, in flight at the kill), ${durability.lost} lost.`,
        `User count grew by the ${formatInt(created)} acknowledged creates of the measured run plus ${unacknowledged} dropped by the client in flight at its end (≤ ${CONNECTIONS} connections); 409 AlreadyExists: ${conflicts}.`,
      ],
      data: { synchronous, create: loadData(CONNECTIONS, result, context.baseline), durability },
    };
  },
};
