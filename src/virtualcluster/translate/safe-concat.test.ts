import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import fc from "fast-check";
import { safeConcatName, shortHash } from "./safe-concat.ts";

test("safeConcatName() reproduces the worked example of the reference verbatim", () => {
  const name = "a".repeat(40);
  const result = safeConcatName(name, "x", "default", "x", "my-vcluster");
  assert.equal(result, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-x-default-x-7799225210");
  assert.equal(result.length, 63);
});

test("safeConcatName() joins short parts with a dash and leaves them alone", () => {
  assert.equal(safeConcatName("nginx", "x", "default", "x", "vcluster"), "nginx-x-default-x-vcluster");
  assert.equal(safeConcatName("a".repeat(63)), "a".repeat(63));
});

test("safeConcatName() replaces .- after truncation", () => {
  const parts = ["a".repeat(50), ".b", "c".repeat(20)];
  const joined = parts.join("-");
  const expected = `${joined.slice(0, 52)}-${createHash("sha256").update(joined).digest("hex").slice(0, 10)}`;
  assert.equal(safeConcatName(...parts), expected.replaceAll(".-", "-"));
  assert.ok(!safeConcatName(...parts).includes(".-"));
});

test("safeConcatName() never returns more than 63 characters and is deterministic", () => {
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 6 }), (parts) => {
      const result = safeConcatName(...parts);
      assert.ok(result.length <= 63);
      assert.equal(result, safeConcatName(...parts));
    }),
  );
});

test("shortHash() is the first hex characters of sha256", () => {
  assert.equal(shortHash("abc"), "ba7816bf8f");
  assert.equal(shortHash("abc", 8), "ba7816bf");
});
