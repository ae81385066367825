import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";
import { bodyMediaType, decodeBody, encodeBody } from "./codec.ts";

const isCode = (code: number, pattern?: RegExp) => (e: unknown) =>
  isStatusError(e) && e.code === code && (!pattern || pattern.test(e.message));

describe("bodyMediaType()", () => {
  it("bodyMediaType() accepts JSON and YAML objects, JSON by default", () => {
    assert.equal(bodyMediaType(undefined, false), "json");
    assert.equal(bodyMediaType("application/json; charset=utf-8", false), "json");
    assert.equal(bodyMediaType("application/yaml", false), "yaml");
    assert.throws(() => bodyMediaType("text/plain", false), isCode(415, /application\/json, application\/yaml/));
  });

  it("bodyMediaType() maps the patch media types, strategic merge included, and refuses others", () => {
    assert.equal(bodyMediaType("application/json-patch+json", true), "json");
    assert.equal(bodyMediaType("application/merge-patch+json", true), "merge");
    assert.equal(bodyMediaType("application/apply-patch+yaml", true), "apply");
    assert.equal(bodyMediaType("application/strategic-merge-patch+json", true), "strategic");
    assert.throws(
      () => bodyMediaType("application/json", true),
      (e: unknown) =>
        isStatusError(e) &&
        e.code === 415 &&
        e.reason === "UnsupportedMediaType" &&
        e.message ===
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
  });
});

describe("decodeBody()", () => {
  it("decodeBody() reads JSON and YAML, and empty bodies as undefined", () => {
    assert.deepEqual(decodeBody(Buffer.from('{"a":1}'), "json"), { a: 1 });
    assert.deepEqual(decodeBody(Buffer.from("a: 1\nb: [x]\nt: 2024-01-01"), "yaml"), {
      a: 1,
      b: ["x"],
      t: "2024-01-01",
    });
    assert.equal(decodeBody(undefined, "json"), undefined);
    assert.equal(decodeBody(Buffer.from("  \n"), "json"), undefined);
  });

  it("decodeBody() reads apply patches sent as JSON or YAML", () => {
    assert.deepEqual(decodeBody(Buffer.from('{"kind":"User"}'), "apply"), { kind: "User" });
    assert.deepEqual(decodeBody(Buffer.from("kind: User\n"), "apply"), { kind: "User" });
  });

  it("decodeBody() answers 400 saying where malformed JSON and YAML break", () => {
    assert.throws(() => decodeBody(Buffer.from('{"a":'), "json"), isCode(400, /not valid JSON/));
    assert.throws(
      () => decodeBody(Buffer.from("a: [1\nb: c: d"), "yaml"),
      isCode(400, /not valid YAML at line \d+ column \d+/),
    );
    assert.throws(() => decodeBody(Buffer.from("a: 1\n---\nb: 2"), "yaml"), isCode(400, /YAML/));
    assert.throws(() => decodeBody(Buffer.from('{"kind": "User",'), "apply"), isCode(400));
  });

  it("decodeBody() refuses __proto__ keys but not the text elsewhere", () => {
    assert.throws(
      () => decodeBody(Buffer.from('{"metadata":{"__proto__":{"x":1}}}'), "json"),
      isCode(400, /__proto__/),
    );
    assert.throws(() => decodeBody(Buffer.from("a:\n  __proto__: 1\n"), "yaml"), isCode(400, /__proto__/));
    assert.deepEqual(decodeBody(Buffer.from('{"a":"__proto__"}'), "json"), { a: "__proto__" });
  });

  it("decodeBody() round-trips any JSON value and only throws 400 on garbage", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        // A "__proto__" key anywhere is refused on purpose (prototype pollution); everything else round-trips.
        if (text.includes('"__proto__":')) {
          assert.throws(
            () => decodeBody(Buffer.from(text), "json"),
            (e: unknown) => isStatusError(e) && e.code === 400,
          );
          return;
        }
        assert.deepEqual(decodeBody(Buffer.from(text), "json"), text.trim() === "" ? undefined : JSON.parse(text));
      }),
    );
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom("json", "yaml", "apply", "merge") as fc.Arbitrary<"json">,
        (text, type) => {
          try {
            decodeBody(Buffer.from(text), type);
          } catch (error) {
            assert.ok(isStatusError(error) && error.code === 400, String(error));
          }
        },
      ),
    );
  });
});

describe("decodeBody() nesting bound", () => {
  const tooDeep = (where: RegExp) =>
    isCode(400, new RegExp(`nested too deeply ${where.source}: objects and lists may nest at most 100 levels`));
  /** `levels` nested objects in JSON text: {"a":{"a":...{"a":1}}}. */
  const jsonObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
  const yamlBlock = (levels: number) => `${"- ".repeat(levels)}x\n`;
  const yamlFlow = (levels: number) => `${"{a: ".repeat(levels)}1${"}".repeat(levels)}`;

  it("decodeBody() takes JSON nested exactly MAX_NESTING_DEPTH levels, in every JSON media type", () => {
    assert.equal(MAX_NESTING_DEPTH, 100);
    for (const type of ["json", "merge", "strategic", "apply"] as const) {
      let value = decodeBody(Buffer.from(jsonObjects(100)), type) as { a: unknown };
      for (let i = 1; i < 100; i++) value = value.a as { a: unknown };
      assert.equal(value.a, 1, type);
    }
  });

  it("decodeBody() refuses JSON nested one level more, and 50,000 levels, with 400 naming the position", () => {
    for (const type of ["json", "merge", "strategic", "apply"] as const) {
      assert.throws(() => decodeBody(Buffer.from(jsonObjects(101)), type), tooDeep(/at position 500/), type);
      assert.throws(() => decodeBody(Buffer.from(jsonObjects(50_000)), type), tooDeep(/at position 500/), type);
      const patch = `[{"op":"add","path":"/a","value":${"[".repeat(50_000)}${"]".repeat(50_000)}}]`;
      assert.throws(() => decodeBody(Buffer.from(patch), type), tooDeep(/at position 131/), type);
    }
  });

  it("decodeBody() bounds YAML block and flow nesting the same way, before yaml recurses", () => {
    for (const yaml of [yamlBlock, yamlFlow]) {
      assert.doesNotThrow(() => decodeBody(Buffer.from(yaml(100)), "yaml"));
      assert.throws(() => decodeBody(Buffer.from(yaml(101)), "yaml"), tooDeep(/at line 1 column \d+/));
      assert.throws(() => decodeBody(Buffer.from(yaml(50_000)), "yaml"), tooDeep(/at line 1 column \d+/));
      // An apply body that starts like JSON is measured as JSON.
      assert.throws(() => decodeBody(Buffer.from(yaml(50_000)), "apply"), tooDeep(/at (line 1 column|position) \d+/));
    }
    const indented = Array.from({ length: 101 }, (_, i) => `${" ".repeat(i)}a:`).join("\n");
    assert.throws(() => decodeBody(Buffer.from(`${indented} 1\n`), "yaml"), tooDeep(/at line 101 column 101/));
  });

  it("decodeBody() counts YAML aliases where they are used, and refuses an alias inside its own anchor", () => {
    const half = (inner: string) => `${"[".repeat(60)}${inner}${"]".repeat(60)}`;
    const stacked = `a: &a ${half("1")}\nb: ${half("*a")}\n`;
    assert.throws(() => decodeBody(Buffer.from(stacked), "yaml"), tooDeep(/at line 1 column 1/));
    const fits = `a: &a ${half("1")}\nb: ${"[".repeat(38)}*a${"]".repeat(38)}\n`;
    assert.doesNotThrow(() => decodeBody(Buffer.from(fits), "yaml"));
    // Before the bound, these decoded to cyclic objects that no later step could copy or serialize.
    assert.throws(() => decodeBody(Buffer.from("a: &a [*a]\n"), "yaml"), tooDeep(/at line 1 column 1/));
    assert.throws(() => decodeBody(Buffer.from("a: &a {b: *a}\n"), "yaml"), tooDeep(/at line 1 column 1/));
  });

  it("decodeBody() counts a pair inside a YAML flow sequence as the map it becomes", () => {
    const pairs = (levels: number) => `${"[a: ".repeat(levels)}1${"]".repeat(levels)}`;
    assert.doesNotThrow(() => decodeBody(Buffer.from(pairs(50)), "yaml"));
    assert.throws(() => decodeBody(Buffer.from(pairs(51)), "yaml"), tooDeep(/at line 1 column 1/));
  });
});

describe("encodeBody()", () => {
  it("encodeBody() writes compact or pretty JSON and YAML", () => {
    assert.equal(encodeBody({ a: [1] }, "json"), '{"a":[1]}');
    assert.equal(encodeBody({ a: [1] }, "json", true), '{\n  "a": [\n    1\n  ]\n}\n');
    assert.equal(encodeBody({ a: { b: "x" } }, "yaml"), "a:\n  b: x\n");
  });
});
