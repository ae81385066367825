// 5. Contended merge PATCH: every connection patches the same user (a different annotation value each request).
// The server queues same-key patches, so no client should see 409 Conflict; they are counted anyway. The
// resourceVersion must advance once per acknowledged patch (no patch is merged away or lost).

import { benchUser, USERS_PATH } from "../lib/api.ts";
import { load } from "../lib/load.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { LOAD_COLUMNS, loadData, loadRow, type Scenario } from "../lib/scenario.ts";
import { formatInt } from "../lib/stats.ts";

const CONNECTIONS = 64;

/** Lets requests the load generator abandoned at its end finish on the server. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
const USER = "bench-patch";
const PATH = `${USERS_PATH}/${USER}`;

export const patchScenario: Scenario = {
  name: "patch",
  title: "Contended merge PATCH of one user",
  async run(context) {
    const platform = await startBenchPlatform();
    try {
      await platform.api.expect(201, "POST", USERS_PATH, benchUser({ name: USER }));
      const options = {
        url: platform.url,
        token: platform.token,
        method: "PATCH",
        path: PATH,
        body: JSON.stringify({ metadata: { annotations: { "bench.platform.sh/n": "[<id>]" } } }),
        contentType: "application/merge-patch+json",
        idReplacement: true,
        connections: CONNECTIONS,
      };
      await load({ ...options, duration: context.warmup });
      await settle();
      const revision = async () =>
        Number(
          (await platform.api.expect<{ metadata: { resourceVersion: string } }>(200, "GET", PATH)).metadata
            .resourceVersion,
        );
      const before = await revision();
      const result = await load({ ...options, duration: context.duration, serverPid: platform.pid });
      await settle();
      const after = await revision();
      const patched = result.status["200"] ?? 0;
      const conflicts = result.status["409"] ?? 0;
      // autocannon drops the requests in flight when the time is up; the server still applies them.
      const unacknowledged = after - before - patched;
      if (unacknowledged < 0 || unacknowledged > CONNECTIONS) {
        throw new Error(`${patched} patches acknowledged but the resourceVersion advanced by ${after - before}`);
      }
      return {
        name: this.name,
        title: this.title,
        tables: [
          {
            columns: [...LOAD_COLUMNS, "409 seen"],
            rows: [[...loadRow("PATCH merge, same user", CONNECTIONS, result, context.baseline), formatInt(conflicts)]],
          },
        ],
        goals: [
          {
            goal: "no 409 Conflict under contention (server queues same-key patches)",
            actual: `${conflicts} × 409`,
            met: conflicts === 0,
          },
        ],
        notes: [
          `resourceVersion advanced by the ${formatInt(patched)} acknowledged patches plus ${unacknowledged} dropped by the client in flight at its end (≤ ${CONNECTIONS}): every patch is its own write, none lost.`,
        ],
        data: { patch: { ...loadData(CONNECTIONS, result, context.baseline), conflicts } },
      };
    } finally {
      await platform.stop();
    }
  },
};
