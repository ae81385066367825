import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { prefixEnd } from "./prefix-end.ts";

const utf8 = (s: string) => Buffer.from(s, "utf8");
const keyArb = fc.string({ unit: "grapheme", maxLength: 8 });

test("prefixEnd() bounds exactly the keys that start with the prefix", () => {
  fc.assert(
    fc.property(keyArb, keyArb, (prefix, key) => {
      const bytes = utf8(key);
      const inRange =
        Buffer.compare(bytes, utf8(prefix)) >= 0 && Buffer.compare(bytes, Buffer.from(prefixEnd(prefix))) < 0;
      assert.equal(inRange, key.startsWith(prefix));
    }),
  );
  assert.deepEqual([...prefixEnd("/a/")], [...utf8("/a0")]);
  assert.deepEqual([...prefixEnd("")], [0xff]);
});
