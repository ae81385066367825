import assert from "node:assert/strict";
import { test } from "node:test";
import { stableJson } from "./stable-json.ts";

/** The old definition: JSON.stringify with every object's keys sorted. */
const reference = (value: unknown) =>
  JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(
          Object.keys(item)
            .sort()
            .map((key) => [key, (item as Record<string, unknown>)[key]]),
        )
      : item,
  );

test("stableJson() writes what JSON.stringify writes, with object keys sorted", () => {
  const values: unknown[] = [
    { b: 1, a: { d: [3, { z: 1, y: null }], c: 'x\n"y"' } },
    [undefined, () => 1, Number.NaN, -0, 1e21, true, "é"],
    { skip: undefined, fn: () => 1, keep: false, date: new Date(0), gone: { toJSON: () => undefined } },
    "text",
    42,
    null,
    { metadata: { labels: { "b/c": "1", a: "2" }, annotations: {} }, subsets: [] },
  ];
  for (const value of values) assert.equal(stableJson(value), reference(value), JSON.stringify(value));
  assert.equal(stableJson({ b: 1, a: 2 }), stableJson({ a: 2, b: 1 }));
  assert.equal(stableJson(undefined), "null");
});
