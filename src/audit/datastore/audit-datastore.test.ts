import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { AuditDatastore, type DatastoreReport } from "./audit-datastore.ts";
import { sampleRow } from "./conformance.ts";
import { POSTGRES_MISSING, postgresAvailable, startTestPostgres } from "./testing-postgres.ts";

const HOUR = 60 * 60 * 1000;
const auditIds = (events: { line: string }[]) =>
  events.map((e) => (JSON.parse(e.line) as { auditID: string }).auditID).sort();

describe("AuditDatastore", () => {
  it("sweep() deletes events older than dataStoreTTL hours", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "audit-ttl-"));
    const now = Date.parse("2026-11-25T12:00:00Z");
    const reports: DatastoreReport[] = [];
    const datastore = new AuditDatastore({
      endpoint: "",
      ttlHours: 2,
      dataDir,
      now: () => now,
      report: (r) => reports.push(r),
    });
    try {
      datastore.add(
        [
          sampleRow({ id: "old", time: now - 3 * HOUR }).line,
          sampleRow({ id: "edge", time: now - 2 * HOUR + 1000 }).line,
          sampleRow({ id: "new", time: now - HOUR }).line,
        ],
        "",
      );
      await datastore.flush();
      await datastore.sweep();
      const { events } = await datastore.search({ filters: [], limit: 10 });
      assert.deepEqual(auditIds(events), ["edge", "new"]);
      assert.ok(reports.some((r) => r.kind === "swept" && r.count === 1));
      datastore.setTtl(undefined);
      datastore.add([sampleRow({ id: "month", time: now - 700 * HOUR }).line], "");
      await datastore.flush();
      await datastore.sweep();
      assert.equal((await datastore.search({ filters: [], limit: 10 })).events.length, 3, "default TTL is 720 h");
    } finally {
      await datastore.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("add() loses nothing within the spool while PostgreSQL is down, and flushes when it returns", async (t) => {
    if (!postgresAvailable()) {
      t.diagnostic(POSTGRES_MISSING);
      t.skip(POSTGRES_MISSING);
      return;
    }
    const server = (await startTestPostgres())!;
    const reports: DatastoreReport[] = [];
    const datastore = new AuditDatastore({
      endpoint: server.connectionString,
      dataDir: "/nonexistent",
      retryDelayMs: 20,
      report: (r) => reports.push(r),
    });
    try {
      const time = Date.now();
      datastore.add([sampleRow({ id: "up", time }).line], "");
      await datastore.flush();
      await server.pause();
      const during = Array.from({ length: 50 }, (_, i) => sampleRow({ id: `down${i}`, time: time + i }).line);
      datastore.add(during, "");
      await datastore.flush();
      assert.ok(
        reports.some((r) => r.kind === "failure"),
        "the outage is reported",
      );
      assert.equal(datastore.spooled(), 50);
      await server.resume();
      while (datastore.spooled() > 0) await datastore.flush();
      assert.ok(reports.some((r) => r.kind === "recovered"));
      const { events } = await datastore.search({ filters: [], limit: 100 });
      assert.equal(events.length, 51, "every event written during the outage arrived");
      assert.ok(!reports.some((r) => r.kind === "dropped"));
    } finally {
      await datastore.close();
      await server.stop();
    }
  });
});
