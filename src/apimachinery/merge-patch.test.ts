import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { applyMergePatch, createMergePatch } from "./merge-patch.ts";

/** JSON values without null anywhere (a null in the target document cannot be produced by a merge patch). */
const { value: nonNullJson } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ maxLength: 3 }),
    fc.integer(),
    fc.boolean(),
    fc.array(tie("value"), { maxLength: 3 }),
    tie("object"),
  ),
  object: fc
    .dictionary(fc.constantFrom("a", "b", "c", "__proto__", "constructor"), tie("value"), { maxKeys: 4 })
    .map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>),
}));
const nonNullObject = fc
  .dictionary(fc.constantFrom("a", "b", "c", "__proto__", "constructor"), nonNullJson, { maxKeys: 4 })
  .map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>);
const anyJson = fc.json({ maxDepth: 3 }).map((text) => JSON.parse(text) as unknown);

describe("applyMergePatch()", () => {
  // RFC 7386, Appendix A.
  const rfcExamples: [unknown, unknown, unknown][] = [
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, expected] of rfcExamples) {
    it(`applyMergePatch() turns ${JSON.stringify(target)} with ${JSON.stringify(patch)} into ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(applyMergePatch(target, patch), expected);
    });
  }

  it("applyMergePatch() leaves target and patch untouched and shares nothing with them", () => {
    const target = { a: { b: [1] }, keep: { x: 1 } };
    const patch = { a: { c: { d: 1 } } };
    const result = applyMergePatch(target, patch) as { a: { c: { d: number } }; keep: { x: number } };
    result.a.c.d = 2;
    result.keep.x = 2;
    assert.deepEqual(target, { a: { b: [1] }, keep: { x: 1 } });
    assert.deepEqual(patch, { a: { c: { d: 1 } } });
  });

  it("applyMergePatch() stores __proto__ as a plain key and never changes a prototype", () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}');
    const result = applyMergePatch({}, patch) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ["__proto__", "constructor"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  it("applyMergePatch() does not merge into inherited members", () => {
    assert.deepEqual(applyMergePatch({}, { toString: { a: 1 } }), { toString: { a: 1 } });
  });

  it("applyMergePatch() with a patch of the document itself gives the document back", () => {
    fc.assert(
      fc.property(nonNullObject, (document) => assert.deepEqual(applyMergePatch(document, document), document)),
    );
  });

  it("applyMergePatch() is idempotent", () => {
    fc.assert(
      fc.property(anyJson, anyJson, (target, patch) => {
        const once = applyMergePatch(target, patch);
        assert.deepEqual(applyMergePatch(once, patch), once);
      }),
    );
  });

  it("applyMergePatch() never mutates its inputs", () => {
    fc.assert(
      fc.property(anyJson, anyJson, (target, patch) => {
        const before = [JSON.stringify(target), JSON.stringify(patch)];
        applyMergePatch(target, patch);
        assert.deepEqual([JSON.stringify(target), JSON.stringify(patch)], before);
      }),
    );
  });
});

describe("createMergePatch()", () => {
  it("createMergePatch() keeps only the differences", () => {
    const original = { a: 1, b: { c: 2, d: 3 }, e: [1], gone: true };
    const modified = { a: 1, b: { c: 5, d: 3 }, e: [1, 2], added: "x" };
    assert.deepEqual(createMergePatch(original, modified), { gone: null, b: { c: 5 }, e: [1, 2], added: "x" });
  });

  it("createMergePatch() of equal documents is empty", () => {
    assert.deepEqual(createMergePatch({ a: { b: [1] } }, { a: { b: [1] } }), {});
  });

  it("createMergePatch() removes a whole nested member with null", () => {
    assert.deepEqual(createMergePatch({ a: { b: 1 } }, {}), { a: null });
  });

  it("createMergePatch() replaces non-object documents whole", () => {
    assert.deepEqual(createMergePatch([1], [2]), [2]);
    assert.deepEqual(createMergePatch({ a: 1 }, "s"), "s");
  });

  it("createMergePatch() handles __proto__ keys as data", () => {
    const original = JSON.parse('{"__proto__": {"a": 1}}');
    const modified = JSON.parse('{"__proto__": {"a": 2}}');
    const patch = createMergePatch(original, modified) as Record<string, unknown>;
    assert.deepEqual(Object.keys(patch), ["__proto__"]);
    assert.equal(Object.getPrototypeOf(patch), Object.prototype);
    assert.deepEqual(applyMergePatch(original, patch), modified);
  });

  it("applyMergePatch(a, createMergePatch(a, b)) equals b for objects without nulls in b", () => {
    fc.assert(
      fc.property(nonNullObject, nonNullObject, (a, b) => {
        assert.deepEqual(applyMergePatch(a, createMergePatch(a, b)), b);
      }),
    );
  });

  it("createMergePatch() never mutates its inputs", () => {
    fc.assert(
      fc.property(anyJson, anyJson, (a, b) => {
        const before = [JSON.stringify(a), JSON.stringify(b)];
        createMergePatch(a, b);
        assert.deepEqual([JSON.stringify(a), JSON.stringify(b)], before);
      }),
    );
  });
});
