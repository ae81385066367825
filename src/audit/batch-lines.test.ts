import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { batchLines } from "./batch-lines.ts";

describe("batchLines()", () => {
  it("batchLines() returns each newline-terminated line of a UTF-8 batch, multi-byte characters whole", () => {
    const lines = ['{"user":"zoë"}', "", '{"emoji":"😀","cjk":"用户"}', "x".repeat(70_000)];
    assert.deepEqual(batchLines(Buffer.from(`${lines.join("\n")}\n`)), lines);
    assert.deepEqual(batchLines(Buffer.alloc(0)), []);
    assert.deepEqual(batchLines(Buffer.from("no newline at the end")), [], "a line is only complete with its newline");
  });
});
