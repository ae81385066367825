// 3. LIST of 500 users: exactly 500 stored (admin + 499), read with ?limit=500 (one full page, so the server also
// counts what remains) and without a limit.

import { benchUser, countUsers, pool, USERS_PATH } from "../lib/api.ts";
import { warmThenLoad } from "../lib/load.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { LOAD_COLUMNS, loadData, loadRow, type Scenario } from "../lib/scenario.ts";

export const LIST_USERS = 500;
const CONNECTIONS = 8;

export const listScenario: Scenario = {
  name: "list",
  title: `LIST of ${LIST_USERS} users`,
  async run(context) {
    const platform = await startBenchPlatform();
    try {
      const existing = await countUsers(platform.api);
      await pool(LIST_USERS - existing, 32, (i) =>
        platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: `list-user-${String(i).padStart(4, "0")}` })),
      );
      const all = await platform.api.expect<{ items: unknown[] }>(200, "GET", USERS_PATH);
      if (all.items.length !== LIST_USERS) throw new Error(`expected ${LIST_USERS} users, found ${all.items.length}`);
      const rows: string[][] = [];
      const data: Record<string, unknown> = {};
      for (const [label, path] of [
        ["limit=500", `${USERS_PATH}?limit=${LIST_USERS}`],
        ["no limit", USERS_PATH],
      ] as const) {
        const result = await warmThenLoad(
          {
            url: platform.url,
            token: platform.token,
            path,
            connections: CONNECTIONS,
            duration: context.duration,
            serverPid: platform.pid,
          },
          context.warmup,
        );
        const kib = Math.round(result.bytesPerResponse / 1024);
        rows.push(loadRow(`LIST ${LIST_USERS}, ${label} (${kib} KiB)`, CONNECTIONS, result, context.baseline));
        data[label] = loadData(CONNECTIONS, result, context.baseline);
      }
      return {
        name: this.name,
        title: this.title,
        tables: [{ columns: LOAD_COLUMNS, rows }],
        goals: [],
        notes: [],
        data,
      };
    } finally {
      await platform.stop();
    }
  },
};
