import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { withoutLoginAdvice } from "./platform-login.ts";

describe("withoutLoginAdvice()", () => {
  it("withoutLoginAdvice() drops the server's closing advice as the expression it replaced did", () => {
    const former = /\.?\s*Please login again\.?$/i;
    assert.equal(withoutLoginAdvice("the access key expired. Please login again."), "the access key expired");
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("Please login again", "please LOGIN again", ".", " ", "\t", "\n", "x"), {
          maxLength: 6,
        }),
        (pieces) => {
          const message = pieces.join("");
          assert.equal(withoutLoginAdvice(message), message.replace(former, ""), JSON.stringify(message));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("withoutLoginAdvice() reads a message with a long run of whitespace in one pass", () => {
    const spaces = " ".repeat(1_000_000);
    assert.equal(withoutLoginAdvice(`no${spaces}x`), `no${spaces}x`);
    assert.equal(withoutLoginAdvice(`no.${spaces}Please login again`), "no");
  });
});
