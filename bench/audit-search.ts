// Search latency of the audit datastore (issue 19) over HTTPS: 1,000,000 events (200 users, a week of time) are
// written into the datastore first, then the platform answers `auditevents` lists. Measured per request, from this
// process: a selector on user and a one-hour time range (the goal: p99 < 100 ms), the newest page of everything, a
// selector on verb (no index of its own) in a one-hour range, and get by audit ID. Embedded SQLite always;
// PostgreSQL too when Debian's postgresql is installed.
//
//   node bench/audit-search.ts [--events 1000000] [--queries 200] [--backends embedded,postgres]

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { auditEventFields } from "../src/audit/datastore/event-fields.ts";
import { EMBEDDED_AUDIT_FILE } from "../src/audit/datastore/open-audit-store.ts";
import { PostgresAuditStore } from "../src/audit/datastore/postgres-audit-store.ts";
import { SqliteAuditStore } from "../src/audit/datastore/sqlite-audit-store.ts";
import { startTestPostgres } from "../src/audit/datastore/testing-postgres.ts";
import type { AuditEventRow, AuditStore } from "../src/audit/datastore/types.ts";
import { AuthClient } from "../test/support/auth-client.ts";
import { startPlatformProcess } from "../test/support/platform-process.ts";
import { formatMs, summarize } from "./lib/stats.ts";

process.umask(0o077); // the platform refuses a data directory others may read
const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    queries: { type: "string", default: "200" },
    backends: { type: "string", default: "embedded,postgres" },
  },
});
const EVENTS = Number(values.events);
const QUERIES = Number(values.queries);
const USERS = 200;
const HOUR = 3_600_000;
const SPAN = 7 * 24 * HOUR;
const API = "/apis/management.platform.sh/v1/auditevents";
const VERBS = ["get", "list", "create", "update", "patch", "delete", "watch"];
const RESOURCES = ["users", "teams", "projects", "virtualclusterinstances", "ownedaccesskeys", "configs"];
const end = Date.now();
const start = end - SPAN;

/** A deterministic pseudo-random sequence, so both backends get the same events. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

function eventLine(i: number, next: () => number): string {
  const time = new Date(start + Math.floor((i / EVENTS) * SPAN)).toISOString().replace("Z", "000Z");
  const user = `user-${Math.floor(next() * USERS)}`;
  const verb = VERBS[Math.floor(next() * VERBS.length)];
  const resource = RESOURCES[Math.floor(next() * RESOURCES.length)];
  const name = `object-${Math.floor(next() * 1000)}`;
  const stage = i % 2 ? "ResponseComplete" : "RequestReceived";
  return (
    `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"bench-${i}","stage":"${stage}",` +
    `"requestURI":"/apis/management.platform.sh/v1/${resource}/${name}","verb":"${verb}","user":{"username":"${user}",` +
    `"groups":["system:authenticated"]},"sourceIPs":["10.0.0.${i % 250}"],"userAgent":"kubectl/v1.32.4",` +
    `"objectRef":{"resource":"${resource}","name":"${name}","apiGroup":"management.platform.sh","apiVersion":"v1"}` +
    `${stage === "ResponseComplete" ? ',"responseStatus":{"metadata":{},"code":200}' : ""},` +
    `"requestReceivedTimestamp":"${time}","stageTimestamp":"${time}"}`
  );
}

async function populate(store: AuditStore): Promise<number> {
  const next = random(42);
  const began = performance.now();
  const BATCH = 5_000;
  for (let i = 0; i < EVENTS; i += BATCH) {
    const rows: AuditEventRow[] = [];
    for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) {
      const line = eventLine(j, next);
      rows.push({ ...auditEventFields(line, 0), instance: "", line });
    }
    await store.append(rows);
  }
  return (performance.now() - began) / 1000;
}

async function timed(client: AuthClient, token: string, query: string): Promise<{ ms: number; items: number }> {
  const began = performance.now();
  const reply = await client.send("GET", `${API}${query}`, { token });
  const ms = performance.now() - began;
  if (reply.status !== 200) throw new Error(`${query}: ${reply.status} ${reply.body.slice(0, 300)}`);
  return { ms, items: (reply.json().items ?? [reply.json()]).length };
}

async function measure(name: string, dataDir: string, endpoint: string | undefined): Promise<string[][]> {
  const platform = await startPlatformProcess({ dataDir });
  const client = new AuthClient(platform.url, platform.caPem);
  const token = platform.adminKey;
  try {
    if (endpoint) {
      const raw = `audit:\n  enabled: true\n  level: 1\n  path: ${join(dataDir, "audit.log")}\n  dataStoreEndpoint: ${endpoint}\n`;
      const reply = await client.send("PATCH", "/apis/management.platform.sh/v1/configs/platform-config", {
        token,
        contentType: "application/merge-patch+json",
        body: { spec: { raw } },
      });
      if (reply.status !== 200) throw new Error(`config: ${reply.status} ${reply.body}`);
    }
    const next = random(7);
    const iso = (ms: number) => new Date(ms).toISOString();
    const window = () => {
      const from = start + Math.floor(next() * (SPAN - HOUR));
      return `since=${iso(from)},until=${iso(from + HOUR)}`;
    };
    const scenarios: [string, () => string][] = [
      [
        "user + 1 h range",
        () => `?fieldSelector=user.username=user-${Math.floor(next() * USERS)},${window()}&limit=500`,
      ],
      ["user, newest 500", () => `?fieldSelector=user.username=user-${Math.floor(next() * USERS)}&limit=500`],
      ["everything, newest 500", () => "?limit=500"],
      ["verb=delete + 1 h range", () => `?fieldSelector=verb=delete,${window()}&limit=500`],
      ["get by audit ID", () => `/bench-${Math.floor(next() * EVENTS)}`],
    ];
    await timed(client, token, "?limit=1"); // opens the datastore
    const rows: string[][] = [];
    for (const [label, query] of scenarios) {
      const samples: number[] = [];
      let items = 0;
      for (let i = 0; i < QUERIES; i++) {
        const result = await timed(client, token, query());
        samples.push(result.ms);
        items += result.items;
      }
      const s = summarize(samples);
      rows.push([
        name,
        label,
        String(QUERIES),
        (items / QUERIES).toFixed(0),
        `${formatMs(s.p50)} ms`,
        `${formatMs(s.p99)} ms`,
        `${formatMs(s.max)} ms`,
      ]);
    }
    return rows;
  } finally {
    client.close();
    await platform.stop();
  }
}

console.log(
  `Audit search — ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? "?"}; ${EVENTS} events, ${QUERIES} queries per row\n`,
);
const rows: string[][] = [];
for (const backend of values.backends.split(",")) {
  const dataDir = await mkdtemp(join(tmpdir(), "vcp-bench-audit-search-"));
  try {
    if (backend === "embedded") {
      const store = new SqliteAuditStore(join(dataDir, EMBEDDED_AUDIT_FILE));
      const seconds = await populate(store);
      await store.close();
      console.log(`embedded: ${EVENTS} events written in ${seconds.toFixed(1)} s`);
      rows.push(...(await measure("embedded SQLite", dataDir, undefined)));
    } else if (backend === "postgres") {
      const server = await startTestPostgres();
      if (!server) {
        console.log("postgres: not installed, skipped");
        continue;
      }
      try {
        const store = new PostgresAuditStore({ connectionString: server.connectionString, timeoutMs: 120_000 });
        const seconds = await populate(store);
        await store.close();
        console.log(`postgres: ${EVENTS} events written in ${seconds.toFixed(1)} s`);
        await writeFile(join(dataDir, ".keep"), "");
        rows.push(...(await measure("PostgreSQL", dataDir, server.connectionString)));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
console.log("\n| store | query | queries | items per answer | p50 | p99 | max |");
console.log("|---|---|---|---|---|---|---|");
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
