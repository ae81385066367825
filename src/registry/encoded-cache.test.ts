import assert from "node:assert/strict";
import { test } from "node:test";
import { EncodedCache } from "./encoded-cache.ts";

test("EncodedCache get() returns what set() stored under the same key", () => {
  const cache = new EncodedCache(10_000);
  cache.set("1\u0000/a", '{"a":1}');
  assert.equal(cache.get("1\u0000/a"), '{"a":1}');
  assert.equal(cache.get("2\u0000/a"), undefined);
});

test("EncodedCache evicts the least recently used entries to stay within its byte budget", () => {
  const text = "x".repeat(100);
  // Each entry costs its key and text plus a fixed overhead; room for about three.
  const cache = new EncodedCache(3 * (2 + 100 + 64));
  cache.set("k1", text);
  cache.set("k2", text);
  cache.set("k3", text);
  assert.equal(cache.get("k1"), text, "k1 becomes the most recently used");
  cache.set("k4", text);
  assert.equal(cache.get("k2"), undefined, "k2 was the least recently used");
  assert.equal(cache.get("k1"), text);
  assert.equal(cache.get("k3"), text);
  assert.equal(cache.get("k4"), text);
  assert.ok(cache.usedBytes <= cache.maxBytes);
});

test("EncodedCache never holds a text larger than its whole budget", () => {
  const cache = new EncodedCache(100);
  cache.set("k", "y".repeat(200));
  assert.equal(cache.get("k"), undefined);
  assert.equal(cache.size, 0);
});
