import assert from "node:assert/strict";
import { test } from "node:test";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { findUndecodableValue } from "./find-undecodable-value.ts";

test("findUndecodableValue() names the first key whose value is no JSON object, across pages", async () => {
  const store = await openSqliteStore({ path: ":memory:" });
  try {
    await Promise.all(Array.from({ length: 12_000 }, (_, i) => store.create(`/a/${String(i).padStart(5, "0")}`, "{}")));
    assert.equal(await findUndecodableValue(store), undefined);
    for (const bad of ['{"cut": "in the mid', "[1,2]", "null", "42", ""]) {
      const record = await store.create("/b/bad", bad);
      assert.deepEqual(await findUndecodableValue(store), { key: "/b/bad", revision: record.revision }, bad);
      await store.delete("/b/bad");
    }
  } finally {
    await store.close();
  }
});
