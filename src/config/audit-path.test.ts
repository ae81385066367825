import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { resolveAuditPath } from "./audit-path.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "audit-path-")));
const data = join(root, "data");
const audit = join(data, "audit");
const other = join(root, "logs");
for (const dir of [audit, other, join(data, "pki")]) mkdirSync(dir, { recursive: true });
writeFileSync(join(data, "pki", "encryption.key"), "key\n");
symlinkSync(join(data, "pki"), join(audit, "to-pki"));
symlinkSync(join(data, "pki", "encryption.key"), join(audit, "key.log"));
const dirs = [audit, other];
after(() => import("node:fs").then(({ rmSync }) => rmSync(root, { recursive: true, force: true })));

test("resolveAuditPath() takes a relative path inside the first audit directory, an absolute one inside any", () => {
  assert.deepEqual(resolveAuditPath("audit.log", dirs), { path: join(audit, "audit.log") });
  assert.deepEqual(resolveAuditPath("platform/audit.log", dirs), { path: join(audit, "platform", "audit.log") });
  assert.deepEqual(resolveAuditPath("pki/encryption.key", dirs), { path: join(audit, "pki", "encryption.key") });
  assert.deepEqual(resolveAuditPath(join(other, "a.log"), dirs), { path: join(other, "a.log") });
});

test("resolveAuditPath() refuses paths outside, .. escapes, links leading out, a link file and the directory", () => {
  for (const path of [
    "/etc/passwd",
    join(data, "pki", "encryption.key"),
    join(data, "audit.log"),
    "../pki/encryption.key",
    `${audit}/logs/../audit.log`,
    "to-pki/encryption.key",
    join(audit, "to-pki", "new.log"),
    audit,
  ]) {
    const { problem } = resolveAuditPath(path, dirs);
    assert.ok(problem, `${path} was accepted`);
    assert.ok(problem.includes(audit), `names the audit directory: ${problem}`);
  }
  assert.match(resolveAuditPath("/tmp/a.log", dirs).problem ?? "", /--audit-dir/);
  assert.match(resolveAuditPath("key.log", dirs).problem ?? "", /is a symbolic link/);
});
