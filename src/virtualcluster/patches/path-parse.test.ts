import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { formatContextPath } from "./path-format.ts";
import { arrayIndex, PatchPathError, type PathSegment, parsePatchPath } from "./path-parse.ts";

const key = (k: string, bracketed = false): PathSegment => ({ kind: "key", key: k, bracketed });
const star: PathSegment = { kind: "wildcard" };

test("parsePatchPath() splits dotted segments and skips empty ones", () => {
  assert.deepEqual(parsePatchPath("metadata.annotations"), [key("metadata"), key("annotations")]);
  assert.deepEqual(parsePatchPath(".a..b."), [key("a"), key("b")]);
  assert.deepEqual(parsePatchPath(""), []);
  assert.deepEqual(parsePatchPath("..."), []);
});

test("parsePatchPath() reads quoted keys with dots and brackets", () => {
  assert.deepEqual(parsePatchPath('spec.rules."test.object.other".0'), [
    key("spec"),
    key("rules"),
    key("test.object.other"),
    key("0"),
  ]);
  assert.deepEqual(parsePatchPath('metadata.annotations["example.com/a.b"]'), [
    key("metadata"),
    key("annotations"),
    key("example.com/a.b", true),
  ]);
  assert.deepEqual(parsePatchPath('a["x]y[z"]'), [key("a"), key("x]y[z", true)]);
  assert.deepEqual(parsePatchPath('a[""]'), [key("a"), key("", true)]);
});

test("parsePatchPath() treats a bracket as its own segment", () => {
  assert.deepEqual(parsePatchPath("a[0]x"), [key("a"), key("0", true), key("x")]);
  assert.deepEqual(parsePatchPath("a[0][1]"), [key("a"), key("0", true), key("1", true)]);
  assert.deepEqual(parsePatchPath("[key]"), [key("key", true)]);
});

test("parsePatchPath() reads * and [*] as wildcards, quoted * as a key", () => {
  assert.deepEqual(parsePatchPath("spec.servers[*].hosts[*]"), [key("spec"), key("servers"), star, key("hosts"), star]);
  assert.deepEqual(parsePatchPath("metadata.annotations.*"), [key("metadata"), key("annotations"), star]);
  assert.deepEqual(parsePatchPath('a."*"'), [key("a"), key("*")]);
  assert.deepEqual(parsePatchPath('a["*"]'), [key("a"), key("*", true)]);
  assert.deepEqual(parsePatchPath("a.b*"), [key("a"), key("b*")]);
});

test("parsePatchPath() rejects a nested bracket", () => {
  assert.throws(() => parsePatchPath("a[b[0]]"), { name: "PatchPathError", message: /nested "\[" at offset 3/ });
});

test("parsePatchPath() rejects a stray closing bracket", () => {
  assert.throws(() => parsePatchPath("a]b"), { message: /unexpected "\]" without "\[" at offset 1/ });
  assert.throws(() => parsePatchPath("a[0]]"), PatchPathError);
});

test("parsePatchPath() rejects empty brackets", () => {
  assert.throws(() => parsePatchPath("a[]"), { message: 'invalid path "a[]": empty "[]" at offset 1' });
});

test("parsePatchPath() rejects an unclosed quote or bracket", () => {
  assert.throws(() => parsePatchPath('a."b.c'), { message: 'invalid path "a.\\"b.c": unclosed quote at offset 2' });
  assert.throws(() => parsePatchPath('a["b]'), { message: /unclosed quote at offset 2/ });
  assert.throws(() => parsePatchPath("a[0"), { message: /unclosed "\[" at offset 1/ });
});

test("arrayIndex() accepts canonical non-negative integers only", () => {
  assert.equal(arrayIndex("0"), 0);
  assert.equal(arrayIndex("17"), 17);
  for (const bad of ["01", "-1", "1.0", "", " 1", "1e3", "99999999999999999999"])
    assert.equal(arrayIndex(bad), undefined);
});

test("parsePatchPath() never throws anything but PatchPathError", () => {
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom("a", ".", "[", "]", '"', "*", "0", " ") }), (path) => {
      try {
        const segments = parsePatchPath(path);
        for (const segment of segments) if (segment.kind === "key") assert.equal(typeof segment.key, "string");
      } catch (error) {
        assert.ok(error instanceof PatchPathError, String(error));
      }
    }),
  );
});

test("parsePatchPath(formatContextPath(keys)) gives back the keys", () => {
  // Keys as `context.path` can print them: no quotes, not empty, not a lone `*`.
  const keyArb = fc.oneof(
    fc.nat({ max: 1000 }),
    fc
      .string({ unit: fc.constantFrom("a", "b", ".", "[", "]", "/", "-", "0", "*"), minLength: 1 })
      .filter((k) => k !== "*"),
  );
  fc.assert(
    fc.property(fc.array(keyArb, { maxLength: 6 }), (keys) => {
      const parsed = parsePatchPath(formatContextPath(keys));
      assert.deepEqual(
        parsed.map((segment) => (segment.kind === "key" ? segment.key : "*")),
        keys.map(String),
      );
    }),
  );
});
