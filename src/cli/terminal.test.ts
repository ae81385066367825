import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import { colorEnabled, readFirstLine, startSpinner, styles } from "./terminal.ts";

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { isTTY, written, write: (text: string) => written.push(text) > 0 };
}

describe("terminal", () => {
  it("colorEnabled() only on a TTY without NO_COLOR and TERM=dumb", () => {
    assert.equal(colorEnabled(stream(true), {}), true);
    assert.equal(colorEnabled(stream(false), {}), false);
    assert.equal(colorEnabled(stream(true), { NO_COLOR: "1" }), false);
    assert.equal(colorEnabled(stream(true), { NO_COLOR: "" }), true);
    assert.equal(colorEnabled(stream(true), { TERM: "dumb" }), false);
  });

  it("styles() adds escape sequences only when enabled", () => {
    assert.equal(styles(false).bold("x"), "x");
    assert.equal(styles(true).bold("x"), "\u001b[1mx\u001b[22m");
  });

  it("startSpinner() writes nothing on a pipe, with NO_COLOR or in CI, and clears its line on a terminal", () => {
    for (const [out, env] of [
      [stream(false), {}],
      [stream(true), { NO_COLOR: "1" }],
      [stream(true), { CI: "true" }],
    ] as const) {
      startSpinner("working", out, env).stop();
      assert.deepEqual(out.written, []);
    }
    const tty = stream(true);
    startSpinner("working", tty, {}).stop();
    assert.match(tty.written[0], /working/);
    assert.equal(tty.written.at(-1), "\r\u001b[2K");
  });

  it("readFirstLine() returns the first line without its ending", async () => {
    assert.equal(await readFirstLine(Readable.from(["secret\r\n", "ignored\n"])), "secret");
    assert.equal(await readFirstLine(Readable.from(["pa", "ss"])), "pass");
    assert.equal(await readFirstLine(Readable.from([])), "");
  });
});
