import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeAuditStoreConformance } from "./conformance.ts";
import { SqliteAuditStore } from "./sqlite-audit-store.ts";

describeAuditStoreConformance("embedded SQLite", async () => {
  const dir = await mkdtemp(join(tmpdir(), "audit-store-"));
  const store = new SqliteAuditStore(join(dir, "events.db"));
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
