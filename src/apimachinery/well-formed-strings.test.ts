import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { illFormedStrings } from "./well-formed-strings.ts";

const LONE = ["\ud800", "\udbff", "\udc00", "\udfff"];

describe("illFormedStrings()", () => {
  it("illFormedStrings() names each string and key holding a lone surrogate, and nothing else", () => {
    const object = {
      spec: { displayName: "ok \u{1F600}", description: "x\ud800", list: ["a", "\udc00"] },
      metadata: { annotations: { "example.com/k\udfff": "v" } },
    };
    const schema = {
      type: "object",
      properties: { metadata: { type: "object", properties: { annotations: { additionalProperties: {} } } } },
    };
    assert.deepEqual(
      illFormedStrings(object, schema).map((e) => e.field),
      ["spec.description", "spec.list[1]", "metadata.annotations[example.com/k\udfff]"],
    );
  });

  it("illFormedStrings() finds a lone surrogate wherever it is put, and passes well-formed text of any kind", () => {
    const wellFormed = fc.jsonValue();
    fc.assert(
      fc.property(wellFormed, (value) => {
        assert.deepEqual(illFormedStrings(JSON.parse(JSON.stringify(value))), []);
      }),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.constantFrom(...LONE), fc.nat(3), (before, after, lone, depth) => {
        let value: unknown = `${before}${lone}${after}`;
        let path = "";
        for (let i = 0; i < depth; i++) {
          value = i % 2 ? [value] : { field: value };
          path = i % 2 ? `[0]${path}` : `.field${path}`;
        }
        const found = illFormedStrings(value);
        // A pair can form with a neighbour: then it is not lone.
        if (`${before}${lone}${after}`.isWellFormed()) assert.deepEqual(found, []);
        else assert.equal(found[0]?.field, path.replace(/^\./, ""));
      }),
    );
  });

  it("illFormedStrings() shows a long value cut short and stops after ten findings", () => {
    const [error] = illFormedStrings({ text: `${"a".repeat(1000)}\ud800` });
    assert.ok((error.badValueText ?? "").length < 100);
    assert.equal(illFormedStrings(Array.from({ length: 50 }, () => "\ud800")).length, 10);
  });
});
