import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "./errors.ts";
import { parseFieldSelector } from "./field-selector.ts";

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(isStatusError(error), `expected a StatusError, got ${error}`);
    assert.equal(error.code, 400);
    return error.message;
  }
  assert.fail("expected a 400 BadRequest");
}

/** The escaping kubectl and client-go apply to a value (fields.EscapeValue). */
function escapeValue(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll(",", "\\,").replaceAll("=", "\\=");
}

describe("parseFieldSelector()", () => {
  it("parseFieldSelector() reads =, == and != terms", () => {
    assert.deepEqual(parseFieldSelector("metadata.name=a,metadata.namespace==b,spec.x!=c").requirements, [
      { field: "metadata.name", operator: "=", value: "a" },
      { field: "metadata.namespace", operator: "=", value: "b" },
      { field: "spec.x", operator: "!=", value: "c" },
    ]);
  });

  it("parseFieldSelector() sorts terms as upstream does", () => {
    const fields = parseFieldSelector("z=1,a=2").requirements.map((r) => r.field);
    assert.deepEqual(fields, ["a", "z"]);
  });

  it("parseFieldSelector() unescapes \\, \\= and \\\\ in values", () => {
    assert.deepEqual(parseFieldSelector("a=x\\,y\\=z\\\\w").requirements, [
      { field: "a", operator: "=", value: "x,y=z\\w" },
    ]);
  });

  it("parseFieldSelector() accepts an empty value", () => {
    const selector = parseFieldSelector("spec.x=");
    assert.equal(selector.matches({ "spec.x": "" }), true);
    assert.equal(selector.matches({}), true, "a missing field counts as empty");
    assert.equal(selector.matches({ "spec.x": "y" }), false);
  });

  it("parseFieldSelector() of the empty string selects everything", () => {
    const selector = parseFieldSelector("");
    assert.equal(selector.isEmpty(), true);
    assert.equal(selector.matches({ "metadata.name": "x" }), true);
  });

  it("parseFieldSelector() skips empty terms", () => {
    assert.equal(parseFieldSelector(",a=b,").requirements.length, 1);
  });

  it("parseFieldSelector() matches every requirement", () => {
    const selector = parseFieldSelector("metadata.name=a,metadata.namespace!=kube-system");
    assert.equal(selector.matches({ "metadata.name": "a", "metadata.namespace": "default" }), true);
    assert.equal(selector.matches({ "metadata.name": "a", "metadata.namespace": "kube-system" }), false);
    assert.equal(selector.matches({ "metadata.name": "b", "metadata.namespace": "default" }), false);
    assert.equal(selector.matches({ "metadata.name": "a", "metadata.namespace": undefined }), true);
  });

  it("parseFieldSelector() does not read inherited properties as field values", () => {
    assert.equal(parseFieldSelector("constructor=").matches({}), true);
    assert.equal(parseFieldSelector("toString!=").matches({}), false);
  });

  it("parseFieldSelector().compile() asks for each field's reader once, then only reads and compares", () => {
    const asked: string[] = [];
    const matches = parseFieldSelector("spec.a=x,spec.b!=y").compile((field: string) => {
      asked.push(field);
      return (object: Record<string, string>) => object[field.slice(5)];
    });
    assert.equal(matches({ a: "x", b: "z" }), true);
    assert.equal(matches({ a: "x", b: "y" }), false);
    assert.equal(matches({}), false, "a missing field reads as empty");
    assert.deepEqual(asked, ["spec.a", "spec.b"]);
    assert.throws(() => parseFieldSelector("bad=1").compile(() => assert.fail("refused")), /refused/);
  });

  it("parseFieldSelector().matches() agrees with reading every term per call", () => {
    const name = fc.constantFrom("a", "b", "constructor");
    const term = fc.tuple(name, fc.constantFrom("=", "==", "!="), fc.constantFrom("", "x", "y"));
    const fields = fc.dictionary(name, fc.option(fc.constantFrom("", "x", "y"), { nil: undefined }));
    fc.assert(
      fc.property(fc.array(term, { maxLength: 4 }), fields, (terms, values) => {
        const selector = parseFieldSelector(terms.map(([f, op, v]) => `${f}${op}${v}`).join(","));
        const read = (field: string) => (Object.hasOwn(values, field) ? values[field] : undefined) ?? "";
        const expected = selector.requirements.every((r) => (r.operator === "=") === (read(r.field) === r.value));
        assert.equal(selector.matches(values), expected);
      }),
    );
  });

  it("parseFieldSelector() keeps spaces in field names, as upstream", () => {
    assert.deepEqual(parseFieldSelector("a =b").requirements, [{ field: "a ", operator: "=", value: "b" }]);
  });

  const failures: [string, string][] = [
    ["abc", "invalid selector: 'abc'; can't understand 'abc'"],
    ["a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"],
    ["a=b=c", "invalid field selector: unescaped character in value: 61"],
    ["a!==b", "invalid field selector: unescaped character in value: 61"],
    ["a=b\\x", "invalid field selector: invalid escape sequence: \\x"],
    ["a=b\\", "invalid field selector: invalid escape sequence: \\"],
  ];
  for (const [selector, message] of failures) {
    it(`parseFieldSelector() rejects ${JSON.stringify(selector)}`, () => {
      assert.equal(
        badRequest(() => parseFieldSelector(selector)),
        message,
      );
    });
  }

  it("parseFieldSelector() recovers any escaped value", () => {
    const field = fc.constantFrom("metadata.name", "spec.a", "status.phase");
    fc.assert(
      fc.property(field, fc.constantFrom("=", "==", "!="), fc.string(), (name, op, value) => {
        const [requirement] = parseFieldSelector(`${name}${op}${escapeValue(value)}`).requirements;
        assert.deepEqual(requirement, { field: name, operator: op === "!=" ? "!=" : "=", value });
      }),
    );
  });

  it("parseFieldSelector() throws nothing but 400 StatusErrors on arbitrary input", () => {
    const alphabet = fc.constantFrom("a", "=", "!", ",", "\\", " ", ".");
    const text = fc.oneof(
      fc.string(),
      fc.array(alphabet, { maxLength: 16 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(text, (input) => {
        try {
          parseFieldSelector(input).matches({ a: "a" });
        } catch (error) {
          assert.ok(isStatusError(error), String(error));
          assert.equal(error.code, 400);
        }
      }),
    );
  });
});
