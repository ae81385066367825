import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { AuditPipe, BATCH_BYTES } from "./audit-pipe.ts";
import type { LinePiece } from "./event.ts";

const ROTATION = { maxSizeBytes: 1024 * 1024 * 1024, maxBackups: 0, maxAgeDays: 0, compress: false };

// Text as event lines hold it (no raw newline): ASCII, JSON escapes, non-ASCII of two to four UTF-8 bytes.
const text = fc.string({ unit: fc.constantFrom("a", "{", '"', "\\n", "é", "用", "😀") });
const piece = fc.oneof(
  text,
  text.map((value): LinePiece => Buffer.from(value)),
  text.map((value): LinePiece => new Uint8Array(Buffer.from(value))),
);

describe("AuditPipe", () => {
  it("AuditPipe.writePieces() writes each line's pieces as UTF-8 and a newline, in order, beside write(), also past a batch", async () => {
    const dir = await mkdtemp(join(tmpdir(), "vcp-audit-pipe-"));
    const path = join(dir, "audit.log");
    const pipe = new AuditPipe({ onMessage: () => {}, onWorkerError: (error) => assert.fail(error) });
    try {
      pipe.configure({ dataDir: "", file: { path, rotation: ROTATION } });
      const lines = fc.sample(fc.array(piece, { maxLength: 8 }), 2000);
      // A line larger than a batch, and enough bytes that batch buffers are handed over and come back for reuse.
      lines.splice(700, 0, [Buffer.from("x".repeat(BATCH_BYTES)), "y"]);
      lines.push(...Array.from({ length: 3000 }, () => [Buffer.from("z".repeat(999)), "é"]));
      const expected: Buffer[] = [];
      for (const [i, pieces] of lines.entries()) {
        if (i % 3 === 0) {
          const line = pieces.map((p) => (typeof p === "string" ? p : Buffer.from(p).toString())).join("");
          pipe.write(line);
          expected.push(Buffer.from(`${line}\n`));
        } else {
          // Only the first `count` pieces count; what follows in the array is not written.
          pipe.writePieces([...pieces, "not written"], pieces.length);
          expected.push(...pieces.map((p) => Buffer.from(p)), Buffer.from("\n"));
        }
      }
      await pipe.call({ method: "settle" });
      assert.deepEqual(await readFile(path), Buffer.concat(expected));
    } finally {
      await pipe.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("AuditPipe.writePieces() gives a tap each line as one string", async () => {
    const tapped: string[] = [];
    const pipe = new AuditPipe({
      onMessage: () => {},
      onWorkerError: (error) => assert.fail(error),
      tap: (lines) => tapped.push(...lines),
    });
    try {
      pipe.writePieces([Buffer.from('{"a":"é'), "😀", Buffer.from('"}'), "ignored"], 3);
      pipe.write('{"b":1}');
      await pipe.call({ method: "settle" });
      assert.deepEqual(tapped, ['{"a":"é😀"}', '{"b":1}']);
    } finally {
      await pipe.close();
    }
  });
});
