import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FALLBACK_OPEN_FILE_LIMIT, openFileLimit, parseOpenFileLimit } from "./open-file-limit.ts";

const limits = (soft: string) =>
  `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 1048576              files\n`;

describe("openFileLimit()", () => {
  it("openFileLimit() reads the soft limit from /proc/self/limits, and falls back to 1024", () => {
    assert.equal(parseOpenFileLimit(limits("1024")), 1024);
    assert.equal(parseOpenFileLimit(limits("unlimited")), Number.MAX_SAFE_INTEGER);
    assert.equal(parseOpenFileLimit("nothing here"), undefined);
    assert.equal(
      openFileLimit(() => limits("20000")),
      20000,
    );
    assert.equal(
      openFileLimit(() => {
        throw new Error("ENOENT");
      }),
      FALLBACK_OPEN_FILE_LIMIT,
    );
    assert.ok(openFileLimit() > 0, "this machine's");
  });
});
