import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeStoreConformance } from "./conformance.ts";
import { instrumentStore, resourceOfKey } from "./instrumented-store.ts";
import { openSqliteStore } from "./sqlite/sqlite-store.ts";

// The decorator must not change any behaviour of the store it wraps.
describeStoreConformance("instrumented SQLite store", async () =>
  instrumentStore(await openSqliteStore({ path: ":memory:" }), () => {}),
);

describe("instrumentStore()", () => {
  it("reports each operation with its resource and outcome", async () => {
    const seen: string[] = [];
    const store = instrumentStore(await openSqliteStore({ path: ":memory:" }), (op, resource, ok) =>
      seen.push(`${op} ${resource} ${ok}`),
    );
    await store.create("/management.platform.sh/users//a", "{}");
    await assert.rejects(store.create("/management.platform.sh/users//a", "{}"));
    await store.get("/core/services/default/x");
    await store.close();
    assert.deepEqual(seen, [
      "create users.management.platform.sh true",
      "create users.management.platform.sh false",
      "get services true",
    ]);
  });

  it("resourceOfKey() names internal keys by their first segment", () => {
    assert.equal(resourceOfKey("/internal/bootstrap/x"), "bootstrap.internal");
    assert.equal(resourceOfKey("/"), "unknown");
  });
});
