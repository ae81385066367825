import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { auditDirectories, auditFileOf } from "./audit-directories.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "audit-dirs-")));
const dataDir = join(root, "data");
mkdirSync(join(dataDir, "pki"), { recursive: true });
after(() => rmSync(root, { recursive: true, force: true }));

test("auditDirectories() makes <data-dir>/audit, or takes --audit-dir instead", () => {
  assert.deepEqual(auditDirectories({ dataDir }), [join(dataDir, "audit")]);
  const logs = join(root, "logs");
  assert.deepEqual(auditDirectories({ dataDir, given: [logs] }), [logs]);
});

test("auditDirectories() refuses a directory that is, holds or lies in pki/, the store, the socket or a key file", () => {
  const keyDir = join(root, "keys");
  mkdirSync(keyDir);
  symlinkSync(join(dataDir, "pki"), join(root, "pki-link"));
  const cases: [string[], RegExp][] = [
    [[dataDir], /overlaps .*\/data\/pki \(the platform's keys and certificates\)/],
    [[join(dataDir, "pki")], /overlaps .*\/pki/],
    [[join(dataDir, "pki", "audit")], /overlaps .*\/pki/],
    [[join(root, "pki-link", "audit")], /overlaps .*\/pki/],
    [[root], /overlaps/],
    [[keyDir], /overlaps .*\/keys\/enc\.key \(a key file\)/],
  ];
  for (const [given, reason] of cases) {
    assert.throws(
      () => auditDirectories({ dataDir, given, keyFiles: [join(keyDir, "enc.key")] }),
      (error: Error) => reason.test(error.message) && error.message.startsWith(`--audit-dir ${given[0]} overlaps`),
      given[0],
    );
  }
});

test("auditFileOf() keeps an earlier version's path to its file name in the audit directory, and says so", () => {
  const dirs = auditDirectories({ dataDir });
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);
  assert.equal(auditFileOf("audit.log", dirs, warn), join(dirs[0], "audit.log"));
  assert.deepEqual(warnings, []);
  assert.equal(auditFileOf(join(dataDir, "audit.log"), dirs, warn), join(dirs[0], "audit.log"));
  assert.equal(auditFileOf(join(dataDir, "pki", "encryption.key"), dirs, warn), join(dirs[0], "encryption.key"));
  assert.equal(warnings.length, 2);
  assert.match(
    warnings[1],
    /audit\.path .*\/pki\/encryption\.key must be a file inside the audit directory .*; writing the audit log to .*\/audit\/encryption\.key instead/,
  );
});
