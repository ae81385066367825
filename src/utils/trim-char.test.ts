import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { trimChar, trimEndChar } from "./trim-char.ts";

describe("trimEndChar() and trimChar()", () => {
  it("trimEndChar() and trimChar() remove the runs a regular expression would", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("-", "=", "a", "\0"), { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        assert.equal(trimEndChar(text, "="), text.replace(/=+$/, ""));
        assert.equal(trimEndChar(text, "\0"), text.replace(/\0+$/, ""));
        assert.equal(trimChar(text, "-"), text.replace(/^-+|-+$/g, ""));
      }),
    );
  });

  it("trimEndChar() and trimChar() take a long run inside a text in one pass", () => {
    const text = `a${"-".repeat(1_000_000)}b`;
    assert.equal(trimEndChar(text, "-"), text);
    assert.equal(trimChar(text, "-"), text);
    assert.equal(trimChar(`--${text}--`, "-"), text);
  });
});
