import assert from "node:assert/strict";
import { test } from "node:test";
import type { StoredRecord } from "../storage/types.ts";
import { openTestRegistry, thingDefinition } from "./testing.ts";

const things = thingDefinition;

const record = (key: string, revision: number): StoredRecord => ({
  key,
  value: JSON.stringify({ metadata: { name: key.split("/").pop() }, spec: { n: revision } }),
  revision,
  createRevision: revision,
});

test("Registry.decodeShared() decodes a record once for every caller, with its resourceVersion", async () => {
  const env = await openTestRegistry([things]);
  try {
    const first = record("/test.platform.sh/things//a", 7);
    const object = env.registry.decodeShared(first);
    assert.equal(object.metadata.resourceVersion, "7");
    assert.deepEqual(object.spec, { n: 7 });
    assert.equal(env.registry.decodeShared(first), object, "the same record gives the same object");
    const next = record("/test.platform.sh/things//a", 8);
    assert.notEqual(env.registry.decodeShared(next), object, "another record (a later version) is decoded anew");
  } finally {
    await env.close();
  }
});

test("Registry.decodeShared() parses records of unregistered resources on their own", async () => {
  const env = await openTestRegistry([things]);
  try {
    const other = record("/other.platform.sh/widgets//w", 3);
    assert.deepEqual(env.registry.decodeShared(other), JSON.parse(other.value));
  } finally {
    await env.close();
  }
});
