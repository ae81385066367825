import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { timeOrderedUuid } from "./time-ordered-uuid.ts";

describe("timeOrderedUuid", () => {
  it("timeOrderedUuid() makes RFC 9562 version 7 UUIDs that sort by their time", () => {
    const ids = Array.from({ length: 600 }, (_, i) => timeOrderedUuid(1_700_000_000_000 + i));
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual([...ids].sort(), ids, "later IDs sort after earlier ones");
    assert.equal(ids[0].slice(0, 13), "018bcfe5-6800", "the first 48 bits are the milliseconds");
    assert.equal(new Set(ids).size, ids.length);
  });

  it("timeOrderedUuid() gives IDs of one millisecond its time and their own random bits, whatever came between", () => {
    const times = [1_700_000_000_000, 1_700_000_000_000, 1_800_000_000_001, 1_700_000_000_000];
    const ids = times.map((time) => timeOrderedUuid(time));
    const prefix = (time: number) => {
      const hex = time.toString(16).padStart(12, "0");
      return `${hex.slice(0, 8)}-${hex.slice(8)}`;
    };
    assert.deepEqual(
      ids.map((id) => id.slice(0, 13)),
      times.map(prefix),
    );
    assert.equal(new Set(ids).size, ids.length);
  });
});
