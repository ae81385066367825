import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { warningHeaderValues } from "./warning-headers.ts";

describe("warningHeaderValues()", () => {
  it("warningHeaderValues() quotes, escapes and deduplicates warnings", () => {
    assert.deepEqual(
      warningHeaderValues(['unknown field "spec.foo"', 'unknown field "spec.foo"', "a\\b", "line\nbreak", ""]),
      ['299 - "unknown field \\"spec.foo\\""', '299 - "a\\\\b"', '299 - "line break"'],
    );
  });

  it("warningHeaderValues() sends non-ASCII text as UTF-8 bytes", () => {
    const [value] = warningHeaderValues(["größe"]);
    assert.equal(Buffer.from(value, "latin1").toString("utf8"), '299 - "größe"');
  });
});
