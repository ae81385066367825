import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sampleRow } from "./conformance.ts";
import { DatastoreWriter } from "./datastore-writer.ts";
import { SqliteAuditStore } from "./sqlite-audit-store.ts";
import type { AuditEventRow, AuditStore } from "./types.ts";

/** The embedded store behind a switch that makes appends fail, as an unreachable datastore does. */
function switchable(store: AuditStore): AuditStore & { down: boolean } {
  return {
    down: false,
    append(rows: readonly AuditEventRow[]) {
      return this.down ? Promise.reject(new Error("connect ECONNREFUSED")) : store.append(rows);
    },
    search: (query) => store.search(query),
    byAuditId: (id) => store.byAuditId(id),
    sweep: (before) => store.sweep(before),
    close: () => store.close(),
  };
}

const line = (id: string, time = Date.parse("2026-11-01T00:00:00Z")) => sampleRow({ id, time }).line;

async function withStore(body: (store: SqliteAuditStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "audit-writer-"));
  const store = new SqliteAuditStore(join(dir, "events.db"));
  try {
    await body(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe("DatastoreWriter", () => {
  it("add() keeps events through an outage and writes them, in order, when the datastore returns", async () => {
    await withStore(async (inner) => {
      const store = switchable(inner);
      const failures: string[] = [];
      let recovered = 0;
      const writer = new DatastoreWriter({
        store,
        retryDelayMs: 5,
        onFailure: (error) => failures.push(error.message),
        onRecovered: () => recovered++,
      });
      writer.add([line("before")], "");
      await writer.flush();
      store.down = true;
      writer.add([line("during1"), line("during2")], "");
      await writer.flush();
      assert.ok(failures.length >= 1, "the failure is reported");
      assert.equal(writer.isFailing(), true);
      assert.equal(writer.spooled(), 2);
      store.down = false;
      while (writer.spooled() > 0) await writer.flush();
      assert.equal(recovered, 1);
      const { events } = await inner.search({ filters: [], limit: 10 });
      assert.deepEqual(events.map((e) => (JSON.parse(e.line) as { auditID: string }).auditID).sort(), [
        "before",
        "during1",
        "during2",
      ]);
      await writer.close();
    });
  });

  it("add() drops the newest events past the spool's bound and says how many", async () => {
    await withStore(async (inner) => {
      const store = switchable(inner);
      store.down = true;
      const dropped: [number, string][] = [];
      const writer = new DatastoreWriter({
        store,
        maxSpooledEvents: 3,
        retryDelayMs: 5,
        onDropped: (count, reason) => dropped.push([count, reason]),
      });
      writer.add(["not json"], "");
      writer.add(
        ["a", "b", "c", "d", "e"].map((id) => line(id)),
        "",
      );
      assert.deepEqual(dropped, [
        [1, "unreadable"],
        [2, "spool-full"],
      ]);
      store.down = false;
      while (writer.spooled() > 0) await writer.flush();
      const { events } = await inner.search({ filters: [], limit: 10 });
      assert.equal(events.length, 3, "every event within the bound arrives");
      await writer.close();
    });
  });

  it("close() counts what could not be written as dropped", async () => {
    await withStore(async (inner) => {
      const store = switchable(inner);
      store.down = true;
      let dropped = 0;
      const writer = new DatastoreWriter({ store, retryDelayMs: 5, onDropped: (count) => (dropped += count) });
      writer.add([line("x"), line("y")], "");
      await writer.flush();
      await writer.close(50);
      assert.equal(dropped, 2);
      writer.add([line("z")], "");
      assert.equal(dropped, 3, "after close every event is dropped and counted");
    });
  });
});
