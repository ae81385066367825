// 2. Authenticated GET of one user, against the same-run baseline (goal: at least half its requests/s).

import { benchUser, USERS_PATH } from "../lib/api.ts";
import { warmThenLoad } from "../lib/load.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { cpuRatio, LOAD_COLUMNS, loadData, loadRow, type Scenario } from "../lib/scenario.ts";
import { formatRatio } from "../lib/stats.ts";
import { GET_CONNECTIONS, GET_PATH, GET_USER } from "./baseline.ts";

export const GOAL_GET_RATIO = 0.5;
/** Issue 36: the GET costs at most this many times the bare server's CPU per request. */
export const GOAL_GET_CPU_RATIO = 1.5;

export const getScenario: Scenario = {
  name: "get",
  title: "Authenticated GET of one user",
  async run(context) {
    const platform = await startBenchPlatform();
    try {
      await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: GET_USER }));
      const probe = await platform.api.request("GET", GET_PATH);
      const bodyBytes = Buffer.byteLength(probe.body);
      const result = await warmThenLoad(
        {
          url: platform.url,
          token: platform.token,
          path: GET_PATH,
          connections: GET_CONNECTIONS,
          duration: context.duration,
          serverPid: platform.pid,
        },
        context.warmup,
      );
      const baseline = context.baseline;
      const ratio = baseline ? result.rate / baseline.rate : Number.NaN;
      return {
        name: this.name,
        title: this.title,
        tables: [
          {
            columns: LOAD_COLUMNS,
            rows: [loadRow(`GET /apis/…/users/${GET_USER} (${bodyBytes} B)`, GET_CONNECTIONS, result, baseline)],
          },
        ],
        goals: [
          {
            goal: `GET req/s ≥ ${GOAL_GET_RATIO} × baseline`,
            actual: formatRatio(ratio),
            met: ratio >= GOAL_GET_RATIO,
          },
          {
            goal: `GET server CPU/req ≤ ${GOAL_GET_CPU_RATIO} × the bare server's (issue 36)`,
            actual: formatRatio(cpuRatio(result, baseline)),
            met: cpuRatio(result, baseline) <= GOAL_GET_CPU_RATIO,
          },
        ],
        notes: [],
        data: { bodyBytes, get: loadData(GET_CONNECTIONS, result, baseline) },
      };
    } finally {
      await platform.stop();
    }
  },
};
