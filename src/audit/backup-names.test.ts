import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BackupNames, compareBackups } from "./backup-names.ts";

describe("BackupNames", () => {
  const names = new BackupNames("/var/log/platform/audit.log");

  it("BackupNames.name() puts the UTC rotation time before the extension, as lumberjack does", () => {
    assert.equal(names.name(new Date("2024-05-01T12:00:00.123Z")), "audit-2024-05-01T12-00-00.123.log");
    assert.equal(names.name(new Date("2024-05-01T12:00:00.123Z"), 2), "audit-2024-05-01T12-00-00.123-2.log");
  });

  it("BackupNames.parse() reads back every name it writes, compressed or not", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date(0), max: new Date("2999-12-31"), noInvalidDate: true }),
        fc.nat(50),
        fc.boolean(),
        (time, counter, gz) => {
          const name = names.name(time, counter) + (gz ? ".gz" : "");
          const parsed = names.parse(name);
          assert.ok(parsed);
          assert.equal(parsed.time.getTime(), time.getTime());
          assert.equal(parsed.counter, counter);
          assert.equal(parsed.compressed, gz);
        },
      ),
    );
  });

  it("BackupNames.parse() ignores the live file and other files", () => {
    for (const name of [
      "audit.log",
      "audit-old.log",
      "other-2024-05-01T12-00-00.123.log",
      "audit-2024-05-01T12-00-00.123.log.gz.tmp",
    ]) {
      assert.equal(names.parse(name), undefined, name);
    }
  });

  it("compareBackups() orders newest first, then by counter", () => {
    const list = [
      "audit-2024-05-01T12-00-00.123.log",
      "audit-2024-05-02T12-00-00.000.log.gz",
      "audit-2024-05-01T12-00-00.123-1.log",
    ]
      .map((n) => names.parse(n)!)
      .sort(compareBackups)
      .map((b) => b.name);
    assert.deepEqual(list, [
      "audit-2024-05-02T12-00-00.000.log.gz",
      "audit-2024-05-01T12-00-00.123-1.log",
      "audit-2024-05-01T12-00-00.123.log",
    ]);
  });
});
