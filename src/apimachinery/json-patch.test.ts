import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "./errors.ts";
import { applyJsonPatch } from "./json-patch.ts";

function statusOf(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (error) {
    assert.ok(isStatusError(error), String(error));
    return { code: error.code, message: error.message };
  }
  assert.fail("expected a StatusError");
}

/** A JSON document generator whose values survive a JSON round trip unchanged (no -0, no undefined). */
const jsonDocument = fc.json({ maxDepth: 3 }).map((text) => JSON.parse(text) as unknown);
/** Objects with ordinary prototypes (fc.dictionary builds null-prototype ones), "__proto__" keys included. */
const jsonObject = fc
  .dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("__proto__", "constructor")), jsonDocument, {
    maxKeys: 5,
  })
  .map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>);

/** All JSON pointers into a document, with the value each one points at. */
function pointers(document: unknown, prefix = ""): [string, unknown][] {
  const out: [string, unknown][] = [[prefix, document]];
  const escapeToken = (token: string) => token.replaceAll("~", "~0").replaceAll("/", "~1");
  if (Array.isArray(document)) {
    for (let i = 0; i < document.length; i++) out.push(...pointers(document[i], `${prefix}/${i}`));
  } else if (document && typeof document === "object") {
    for (const [k, v] of Object.entries(document)) out.push(...pointers(v, `${prefix}/${escapeToken(k)}`));
  }
  return out;
}

describe("applyJsonPatch()", () => {
  const base = { a: { b: [1, 2, 3], c: "x" }, "d/e": 1, "f~g": 2 };
  const cases: [string, unknown[], unknown][] = [
    ["adds a member", [{ op: "add", path: "/a/z", value: 9 }], { ...base, a: { ...base.a, z: 9 } }],
    ["adds into an array", [{ op: "add", path: "/a/b/1", value: 9 }], { ...base, a: { ...base.a, b: [1, 9, 2, 3] } }],
    ["appends with -", [{ op: "add", path: "/a/b/-", value: 4 }], { ...base, a: { ...base.a, b: [1, 2, 3, 4] } }],
    [
      "appends at the length",
      [{ op: "add", path: "/a/b/3", value: 4 }],
      { ...base, a: { ...base.a, b: [1, 2, 3, 4] } },
    ],
    ["replaces through add", [{ op: "add", path: "/a/c", value: "y" }], { ...base, a: { ...base.a, c: "y" } }],
    ["removes a member", [{ op: "remove", path: "/a/c" }], { ...base, a: { b: [1, 2, 3] } }],
    ["removes an item", [{ op: "remove", path: "/a/b/0" }], { ...base, a: { ...base.a, b: [2, 3] } }],
    [
      "replaces a value",
      [{ op: "replace", path: "/a/b/2", value: null }],
      { ...base, a: { ...base.a, b: [1, 2, null] } },
    ],
    [
      "unescapes ~1 and ~0",
      [
        { op: "replace", path: "/d~1e", value: 5 },
        { op: "remove", path: "/f~0g" },
      ],
      { a: base.a, "d/e": 5 },
    ],
    ["moves a value", [{ op: "move", from: "/a/c", path: "/c" }], { ...base, a: { b: [1, 2, 3] }, c: "x" }],
    [
      "moves within an array",
      [{ op: "move", from: "/a/b/0", path: "/a/b/-" }],
      { ...base, a: { ...base.a, b: [2, 3, 1] } },
    ],
    ["moves onto itself", [{ op: "move", from: "/a/c", path: "/a/c" }], base],
    ["copies a value", [{ op: "copy", from: "/a/b", path: "/b" }], { ...base, b: [1, 2, 3] }],
    ["passes a test", [{ op: "test", path: "/a", value: { c: "x", b: [1, 2, 3] } }], base],
    ["replaces the root", [{ op: "replace", path: "", value: [1] }], [1]],
    ["adds at the root", [{ op: "add", path: "", value: "s" }], "s"],
    ["applies an empty patch", [], base],
  ];
  for (const [what, patch, expected] of cases) {
    it(`applyJsonPatch() ${what}`, () => {
      assert.deepEqual(applyJsonPatch(base, patch), expected);
    });
  }

  it("applyJsonPatch() applies operations in order", () => {
    const patch = [
      { op: "add", path: "/list", value: [] },
      { op: "add", path: "/list/-", value: { name: "a" } },
      { op: "test", path: "/list/0/name", value: "a" },
      { op: "copy", from: "/list/0", path: "/list/-" },
      { op: "replace", path: "/list/1/name", value: "b" },
    ];
    assert.deepEqual(applyJsonPatch({}, patch), { list: [{ name: "a" }, { name: "b" }] });
  });

  it("applyJsonPatch() leaves the document and the patch untouched", () => {
    const document = { a: { b: [1] } };
    const value = { deep: [1] };
    const patch = [
      { op: "add", path: "/a/v", value },
      { op: "add", path: "/a/b/-", value: 2 },
    ];
    const result = applyJsonPatch(document, patch) as { a: { v: { deep: number[] } } };
    result.a.v.deep.push(99);
    assert.deepEqual(document, { a: { b: [1] } });
    assert.deepEqual(value, { deep: [1] });
  });

  it("applyJsonPatch() stores __proto__ as a plain key", () => {
    const result = applyJsonPatch({}, [
      { op: "add", path: "/__proto__", value: { polluted: true } },
      { op: "add", path: "/constructor", value: 1 },
    ]) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ["__proto__", "constructor"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("applyJsonPatch() does not follow inherited properties", () => {
    const { code, message } = statusOf(() => applyJsonPatch({}, [{ op: "add", path: "/constructor/x", value: 1 }]));
    assert.equal(code, 422);
    assert.match(message, /doc is missing path/);
    assert.equal(statusOf(() => applyJsonPatch({}, [{ op: "remove", path: "/toString" }])).code, 422);
  });

  const badBodies: [string, unknown, RegExp][] = [
    ["an object body", { op: "add" }, /must be an array of operations/],
    ["a null body", null, /must be an array/],
    ["a non-object operation", ["add"], /operation 0: an operation must be a JSON object/],
    ["an unknown op", [{ op: "merge", path: "/a" }], /operation 0: unknown op "merge"/],
    ["a missing op", [{ path: "/a" }], /missing "op"/],
    ["a missing path", [{ op: "remove" }], /missing "path"/],
    ["a non-string path", [{ op: "remove", path: 3 }], /"path" must be a string/],
    ["a pointer without a slash", [{ op: "remove", path: "a" }], /not a valid JSON pointer/],
    ["a bad escape", [{ op: "remove", path: "/a~2" }], /not a valid JSON pointer/],
    ["a missing value", [{ op: "add", path: "/a" }], /missing "value"/],
    ["a missing from", [{ op: "move", path: "/a" }], /missing "from"/],
    [
      "a bad second op",
      [
        { op: "test", path: "", value: 1 },
        { op: "nope", path: "" },
      ],
      /operation 1: unknown op/,
    ],
  ];
  for (const [what, body, message] of badBodies) {
    it(`applyJsonPatch() answers 400 for ${what}`, () => {
      const status = statusOf(() => applyJsonPatch({ a: 1 }, body));
      assert.equal(status.code, 400);
      assert.match(status.message, message);
    });
  }

  const failing: [string, unknown[], string][] = [
    [
      "a failed test",
      [{ op: "test", path: "/a", value: 2 }],
      'JSON patch operation 0 (test "/a") does not apply: testing value "/a" failed: test failed',
    ],
    [
      "removing a missing key",
      [{ op: "remove", path: "/x" }],
      'JSON patch operation 0 (remove "/x") does not apply: doc is missing path: "/x"',
    ],
    [
      "replacing a missing key",
      [{ op: "replace", path: "/x", value: 1 }],
      'JSON patch operation 0 (replace "/x") does not apply: doc is missing key: "/x"',
    ],
    [
      "adding under a missing parent",
      [{ op: "add", path: "/x/y", value: 1 }],
      'JSON patch operation 0 (add "/x/y") does not apply: doc is missing path: "/x/y"',
    ],
    [
      "adding past the end",
      [{ op: "add", path: "/l/5", value: 1 }],
      'JSON patch operation 0 (add "/l/5") does not apply: Unable to access invalid index: 5 in "/l/5"',
    ],
    [
      "removing past the end",
      [{ op: "remove", path: "/l/2" }],
      'JSON patch operation 0 (remove "/l/2") does not apply: Unable to access invalid index: 2 in "/l/2"',
    ],
    [
      "a leading zero index",
      [{ op: "remove", path: "/l/01" }],
      'JSON patch operation 0 (remove "/l/01") does not apply: value was not a proper array index: "01" in "/l/01"',
    ],
    [
      "a negative index",
      [{ op: "remove", path: "/l/-1" }],
      'JSON patch operation 0 (remove "/l/-1") does not apply: value was not a proper array index: "-1" in "/l/-1"',
    ],
    [
      "removing the root",
      [{ op: "remove", path: "" }],
      'JSON patch operation 0 (remove "") does not apply: cannot remove the root of the document',
    ],
    [
      "moving into a child",
      [{ op: "move", from: "/l", path: "/l/0" }],
      'JSON patch operation 0 (move "/l/0" from "/l") does not apply: cannot move "/l" into its own child "/l/0"',
    ],
    [
      "copying from a missing path",
      [{ op: "copy", from: "/x", path: "/y" }],
      'JSON patch operation 0 (copy "/y" from "/x") does not apply: doc is missing from path: "/x"',
    ],
    [
      "a later failure",
      [
        { op: "add", path: "/b", value: 1 },
        { op: "test", path: "/b", value: 2 },
      ],
      'JSON patch operation 1 (test "/b") does not apply: testing value "/b" failed: test failed',
    ],
  ];
  for (const [what, patch, message] of failing) {
    it(`applyJsonPatch() answers 422 for ${what}`, () => {
      const document = { a: 1, l: [1, 2] };
      const status = statusOf(() => applyJsonPatch(document, patch));
      assert.equal(status.code, 422);
      assert.equal(status.message, message);
      assert.deepEqual(document, { a: 1, l: [1, 2] }, "nothing partial is left behind");
    });
  }

  it("applyJsonPatch() answers 413 past 10000 operations", () => {
    const op = { op: "test", path: "", value: {} };
    assert.deepEqual(applyJsonPatch({}, Array(10000).fill(op)), {});
    const status = statusOf(() => applyJsonPatch({}, Array(10001).fill(op)));
    assert.equal(status.code, 413);
    assert.equal(status.message, "The allowed maximum operations in a JSON patch is 10000, got 10001");
  });

  it("applyJsonPatch() test succeeds for every pointer into the document", () => {
    fc.assert(
      fc.property(jsonDocument, (document) => {
        for (const [pointer, value] of pointers(document)) {
          assert.deepEqual(applyJsonPatch(document, [{ op: "test", path: pointer, value }]), document);
        }
      }),
    );
  });

  it("applyJsonPatch() add then remove of a new member restores the document", () => {
    fc.assert(
      fc.property(jsonObject, fc.string(), jsonDocument, (document, key, value) => {
        fc.pre(!Object.hasOwn(document, key));
        const path = `/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
        const added = applyJsonPatch(document, [{ op: "add", path, value }]);
        assert.deepEqual((added as Record<string, unknown>)[key], value);
        assert.deepEqual(applyJsonPatch(added, [{ op: "remove", path }]), document);
      }),
    );
  });

  it("applyJsonPatch() replace with the value itself changes nothing", () => {
    fc.assert(
      fc.property(jsonDocument, (document) => {
        for (const [pointer, value] of pointers(document)) {
          assert.deepEqual(applyJsonPatch(document, [{ op: "replace", path: pointer, value }]), document);
        }
      }),
    );
  });

  it("applyJsonPatch() never mutates its input and fails only with StatusErrors", () => {
    const op = fc.record({
      op: fc.constantFrom("add", "remove", "replace", "move", "copy", "test", "bad"),
      path: fc.constantFrom("", "/a", "/a/0", "/a/-", "/b", "/b/c", "/x/y", "a"),
      from: fc.constantFrom("/a", "/b", "/a/0", ""),
      value: jsonDocument,
    });
    fc.assert(
      fc.property(jsonObject, fc.array(op, { maxLength: 6 }), (document, patch) => {
        const before = JSON.stringify(document);
        const patchBefore = JSON.stringify(patch);
        try {
          applyJsonPatch(document, patch);
        } catch (error) {
          assert.ok(isStatusError(error), String(error));
          assert.ok([400, 422].includes(error.code));
        }
        assert.equal(JSON.stringify(document), before);
        assert.equal(JSON.stringify(patch), patchBefore);
      }),
    );
  });

  it("applyJsonPatch() keeps the result within MAX_NESTING_DEPTH: both sides of the bound, copies and moves", () => {
    /** `levels` nested objects {a: {a: ... {}}}. */
    const nested = (levels: number): unknown => {
      let value: unknown = {};
      for (let i = 1; i < levels; i++) value = { a: value };
      return value;
    };
    const path = `/${Array(9).fill("x").join("/")}`;
    const base = { x: { x: { x: { x: { x: { x: { x: { x: {} } } } } } } } };
    // The value lands 9 levels down: 9 + 91 = 100 levels fit, one more does not.
    const fits = applyJsonPatch(base, [{ op: "add", path, value: nested(91) }]);
    assert.ok(fits);
    const beyond = statusOf(() => applyJsonPatch(base, [{ op: "replace", path: "/x", value: nested(100) }]));
    assert.equal(beyond.code, 400);
    assert.equal(
      beyond.message,
      'the object after JSON patch operation 0 (replace "/x") is nested too deeply: objects and lists may nest at most 100 levels',
    );
    // A copy of a branch into its own leaf nests it twice as deep as any body sent.
    const copied = statusOf(() =>
      applyJsonPatch({ a: nested(60) }, [{ op: "copy", from: "/a", path: `${"/a".repeat(59)}/c` }]),
    );
    assert.equal(copied.code, 400);
    assert.match(copied.message, /^the object after JSON patch operation 0 \(copy "(\/a){59}\/c" from "\/a"\)/);
    // Copies that keep within the depth but double the size each time stop at 3 MiB copied (the memory ran out).
    const doubling = Array.from({ length: 40 }, (_, i) => ({ op: "copy", from: "/a", path: `/a/c${i}` }));
    const grown = statusOf(() => applyJsonPatch({ a: { text: "x".repeat(1000) } }, doubling));
    assert.equal(grown.code, 422);
    assert.match(
      grown.message,
      /^JSON patch operation 1\d \(copy "\/a\/c1\d" from "\/a"\) does not apply: the copies of this patch add more than 3145728 bytes/,
    );
    const moved = statusOf(() =>
      applyJsonPatch({ a: nested(60), b: nested(60) }, [{ op: "move", from: "/a", path: `/b${"/a".repeat(58)}/c` }]),
    );
    assert.equal(moved.code, 400);
  });
});
