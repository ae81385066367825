import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { secretValueInComment } from "./secret-paths.ts";

/** The regular expression secretValueInComment() replaced: the same answers, but cubic on a long secret-like word. */
const FORMER = /((?:secret|passw\w*|token|apikey|api_key|private_?key|credential)\w*["']?\s*[:=]\s*)(\S.*)$/i;
const formerAnswer = (comment: string) => {
  const match = FORMER.exec(comment);
  return match ? match.index + match[1].length : -1;
};

const PIECES = ["token", "Passw", "SECRET", "private", "_", "key", "api", "Key", "credential", "a", "9", ":", "=", " "];
const MORE_PIECES = ['"', "'", "\u2028", "\n", "\r", "\t", "#", "-", "x"];

describe("secretValueInComment()", () => {
  it("secretValueInComment() finds where a secret-like name's value starts in a comment", () => {
    assert.equal(secretValueInComment("# old clientSecret: previous-secret"), "# old clientSecret: ".length);
    assert.equal(secretValueInComment('# "token" = abc'), '# "token" = '.length);
    assert.equal(secretValueInComment("# passwords:   hunter2 and more"), "# passwords:   ".length);
    assert.equal(secretValueInComment("# tokens are rotated: weekly"), -1, "the name must be right before the ':'");
    assert.equal(secretValueInComment("# token:"), -1, "nothing after the ':'");
    assert.equal(secretValueInComment("# token: value\n more"), -1, "the value must run to the comment's end");
    assert.equal(secretValueInComment("# token:\n value"), "# token:\n ".length, "on the last line");
    assert.equal(secretValueInComment("# a\n# token: value"), "# a\n# token: ".length);
  });

  it("secretValueInComment() answers as the regular expression it replaced, for any comment", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES, ...MORE_PIECES), { maxLength: 14 }), (pieces) => {
        const comment = pieces.join("");
        assert.equal(secretValueInComment(comment), formerAnswer(comment), JSON.stringify(comment));
      }),
      { numRuns: 3000 },
    );
  });

  it("secretValueInComment() scans a body-sized comment of secret-like words once", () => {
    // The former expression took 6 s on 4,000 "passw" and would take days on these: each answer needs one pass.
    assert.equal(secretValueInComment(`# ${"passw".repeat(200_000)}`), -1);
    assert.equal(secretValueInComment(`# passw${"a".repeat(1_000_000)}`), -1);
    const long = `# ${"token ".repeat(100_000)}token: value`;
    assert.equal(secretValueInComment(long), long.length - "value".length);
  });
});
