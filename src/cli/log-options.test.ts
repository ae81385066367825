import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatLogLine } from "./log-options.ts";

describe("log options", () => {
  it("formatLogLine() writes time, level, message and every other field of the JSON record", () => {
    const record = {
      level: 40,
      time: Date.parse("2026-01-01T00:00:00Z"),
      pid: 1,
      hostname: "h",
      key: "endpoints/default/db",
      retries: 2,
      error: "patch failed: ReferenceError",
      msg: "sync failed; retrying with backoff",
    };
    assert.equal(
      formatLogLine(JSON.stringify(record)),
      '2026-01-01T00:00:00.000Z WARN  sync failed; retrying with backoff key=endpoints/default/db retries=2 error="patch failed: ReferenceError"\n',
    );
  });

  it("formatLogLine() shows an error's message, objects as JSON, and passes a line that is not JSON through", () => {
    const line = formatLogLine(
      JSON.stringify({
        level: 50,
        time: 0,
        msg: "failed",
        err: { type: "Error", message: "boom", stack: "..." },
        o: { a: 1 },
      }),
    );
    assert.equal(line, '1970-01-01T00:00:00.000Z ERROR failed err="boom" o={"a":1}\n');
    assert.equal(formatLogLine("plain"), "plain\n");
  });
});
