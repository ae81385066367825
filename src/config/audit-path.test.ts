import assert from "node:assert/strict";
import { test } from "node:test";
import { auditPathProblem } from "./audit-path.ts";

const allowed = ["/var/lib/vcp", "/var/log/vcp"];

test("auditPathProblem() accepts files inside an allowed directory, at any depth", () => {
  assert.equal(auditPathProblem("/var/lib/vcp/audit.log", allowed), undefined);
  assert.equal(auditPathProblem("/var/log/vcp/platform/audit.log", allowed), undefined);
});

test("auditPathProblem() refuses paths outside, relative ones, .. escapes and the directory itself", () => {
  for (const path of [
    "/etc/passwd",
    "/var/lib/vcp-other/audit.log",
    "/var/lib/vcp/../../etc/cron.d/x",
    "/var/lib/vcp/logs/../audit.log",
    "audit.log",
    "../audit.log",
    "/var/lib/vcp",
  ]) {
    const problem = auditPathProblem(path, allowed);
    assert.ok(problem, `${path} was accepted`);
    assert.match(problem, /\/var\/lib\/vcp, \/var\/log\/vcp/, "names the allowed directories");
  }
  assert.match(auditPathProblem("/tmp/a.log", allowed) ?? "", /--audit-dir/);
});
