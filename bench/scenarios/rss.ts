// 7. Memory with 10,000 users stored: the server's resident set (VmRSS from /proc) idle after start, right after
// the users were created with concurrent POSTs, and after a GET load at that size; GET throughput at that size.

import { stat } from "node:fs/promises";
import { join } from "node:path";
import { benchUser, countUsers, USERS_PATH } from "../lib/api.ts";
import { collectGarbage } from "../lib/inspector.ts";
import { load, warmThenLoad } from "../lib/load.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { memoryStatus } from "../lib/proc.ts";
import { LOAD_COLUMNS, loadData, loadRow, type Scenario } from "../lib/scenario.ts";
import { formatInt, formatMiB } from "../lib/stats.ts";
import { GET_CONNECTIONS } from "./baseline.ts";

export const RSS_USERS = 10_000;
const CREATE_CONNECTIONS = 64;
const USER = "bench-rss";
/** Issue 36's memory goals, in MB (10^6 bytes) as the issue states them. */
const GOAL_IDLE_MB = 100;
const GOAL_LOADED_MB = 150;
/** Two of the platform's 5 s looks for work, and a margin. */
const QUIET_SETTLE_MS = 12_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

export const rssScenario: Scenario = {
  name: "rss",
  title: `Server RSS with ${formatInt(RSS_USERS)} users stored`,
  async run(context) {
    const platform = await startBenchPlatform();
    try {
      await sleep(1000);
      const idle = memoryStatus(platform.pid);
      await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: USER }));
      const missing = RSS_USERS - (await countUsers(platform.api));
      const creates = await load({
        url: platform.url,
        token: platform.token,
        method: "POST",
        path: USERS_PATH,
        body: JSON.stringify(benchUser({ generateName: "bench-" })),
        connections: CREATE_CONNECTIONS,
        amount: missing,
        serverPid: platform.pid,
      });
      const stored = await countUsers(platform.api);
      if (stored !== RSS_USERS) throw new Error(`expected ${RSS_USERS} users, found ${stored}`);
      await sleep(2000);
      const afterCreate = memoryStatus(platform.pid);
      const path = `${USERS_PATH}/${USER}`;
      const get = await warmThenLoad(
        {
          url: platform.url,
          token: platform.token,
          path,
          connections: GET_CONNECTIONS,
          duration: context.duration,
          serverPid: platform.pid,
        },
        context.warmup,
      );
      const afterGet = memoryStatus(platform.pid);
      // The platform gives its heap back once work stops (src/cli/platform-memory.ts): looks every 5 s.
      await sleep(QUIET_SETTLE_MS);
      const settled = memoryStatus(platform.pid);
      // Last, because it opens the inspector in the server: a full GC, then what is left.
      const heap = await collectGarbage(platform.pid);
      await sleep(500);
      const afterGc = memoryStatus(platform.pid);
      const db = join(platform.process.dataDir, "platform.db");
      const dbBytes = (await fileSize(db)) + (await fileSize(`${db}-wal`));
      const memoryRows = [
        ["RSS idle after start (1 user)", formatMiB(idle.vmRssKiB)],
        [`RSS after creating ${formatInt(missing)} users (2 s settle)`, formatMiB(afterCreate.vmRssKiB)],
        [`RSS after the GET run`, formatMiB(afterGet.vmRssKiB)],
        [`RSS ${QUIET_SETTLE_MS / 1000} s after the GET run (nothing forced)`, formatMiB(settled.vmRssKiB)],
        ["peak RSS (VmHWM)", formatMiB(afterGet.vmHwmKiB)],
        ["RSS after a full GC (via the inspector)", heap ? formatMiB(afterGc.vmRssKiB) : "n/a"],
        [
          "V8 heap used / allocated after the GC",
          heap ? `${formatMiB(heap.usedBytes / 1024)} / ${formatMiB(heap.totalBytes / 1024)}` : "n/a",
        ],
        ["database file + WAL", formatMiB(dbBytes / 1024)],
      ];
      return {
        name: this.name,
        title: this.title,
        tables: [
          { columns: ["memory", "value"], rows: memoryRows },
          {
            columns: LOAD_COLUMNS,
            rows: [
              loadRow(`create ${formatInt(missing)} users (POST)`, CREATE_CONNECTIONS, creates, context.baseline),
              loadRow(`GET one user, ${formatInt(RSS_USERS)} stored`, GET_CONNECTIONS, get, context.baseline),
            ],
          },
        ],
        goals: [
          {
            goal: `RSS idle after start < ${GOAL_IDLE_MB} MB (issue 36)`,
            actual: formatMiB(idle.vmRssKiB),
            met: idle.vmRssKiB * 1024 < GOAL_IDLE_MB * 1e6,
          },
          {
            goal: `RSS with ${formatInt(RSS_USERS)} users after a GET run < ${GOAL_LOADED_MB} MB (issue 36)`,
            actual: `${formatMiB(afterGet.vmRssKiB)} at once, ${formatMiB(settled.vmRssKiB)} ${QUIET_SETTLE_MS / 1000} s later`,
            met: settled.vmRssKiB * 1024 < GOAL_LOADED_MB * 1e6,
          },
        ],
        notes: [],
        data: {
          users: stored,
          rssKiB: {
            idle: idle.vmRssKiB,
            afterCreate: afterCreate.vmRssKiB,
            afterGet: afterGet.vmRssKiB,
            settledAfterGet: settled.vmRssKiB,
            afterFullGc: heap ? afterGc.vmRssKiB : undefined,
          },
          v8HeapAfterFullGc: heap,
          peakRssKiB: afterGet.vmHwmKiB,
          databaseBytes: dbBytes,
          create: loadData(CREATE_CONNECTIONS, creates, context.baseline),
          get: loadData(GET_CONNECTIONS, get, context.baseline),
        },
      };
    } finally {
      await platform.stop();
    }
  },
};
