import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
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

describe("encodeBody()", () => {
  it("encodeBody() writes compact or pretty JSON and YAML", () => {
    assert.equal(encodeBody({ a: [1] }, "json"), '{"a":[1]}');
    assert.equal(encodeBody({ a: [1] }, "json", true), '{\n  "a": [\n    1\n  ]\n}\n');
    assert.equal(encodeBody({ a: { b: "x" } }, "yaml"), "a:\n  b: x\n");
  });
});
