// The console's pure helpers, run under Node: return paths (no open redirects), the Config's errors placed at
// lines, relative dates.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configLineErrors } from "../../console/src/lib/config-errors.ts";
import { loginPath, safeReturnPath } from "../../console/src/lib/return-path.ts";
import { relativeTime } from "../../console/src/lib/time.ts";
import { openRedirectPayloads } from "../../src/utils/testing-open-redirects.ts";

describe("console helpers", () => {
  it("safeReturnPath() keeps paths of this platform and refuses every other destination", () => {
    assert.equal(safeReturnPath("/users"), "/users");
    assert.equal(safeReturnPath("/oidc/auth?client_id=x&state=y#z"), "/oidc/auth?client_id=x&state=y#z");
    for (const bad of [
      "//evil.example.com/x",
      "/\\evil.example.com",
      "https://evil.example.com/",
      "javascript:alert(1)",
      "users",
      "/login?return=/x",
      "/a\nb",
      "/.//evil.example.com",
      "",
      null,
    ]) {
      assert.equal(safeReturnPath(bad), undefined, String(bad));
    }
    assert.equal(loginPath("/teams"), "/login?return=%2Fteams");
    assert.equal(loginPath("/"), "/login");
  });

  it("safeReturnPath() refuses every known open-redirect payload or keeps it on the platform", () => {
    for (const payload of openRedirectPayloads()) {
      const target = safeReturnPath(payload);
      if (target === undefined) continue;
      const landed = new URL(target, "https://platform.example.com");
      assert.equal(landed.origin, "https://platform.example.com", payload);
      assert.ok(!target.startsWith("//") && !decodeURIComponent(target).startsWith("//"), payload);
    }
  });

  it("configLineErrors() reads the line of each cause and sorts by it", () => {
    const errors = configLineErrors({
      message: "Config is invalid",
      details: {
        causes: [
          { field: "spec.raw.auth.groupsFilters[1]", message: 'Invalid value: "(": bad regexp (line 7)' },
          { field: "spec.raw", message: "bad YAML (line 2, column 3)" },
          { field: "spec.raw.audit", message: "no line here" },
        ],
      },
    });
    assert.deepEqual(
      errors.map((e) => e.line),
      [2, 7, undefined],
    );
    assert.deepEqual(configLineErrors({ message: "forbidden" }), [{ field: "", message: "forbidden" }]);
  });

  it("relativeTime() words a time relative to now", () => {
    const now = Date.parse("2026-11-25T12:00:00Z");
    assert.equal(relativeTime("2026-11-25T11:57:00Z", now), "3 minutes ago");
    assert.equal(relativeTime("2026-11-27T12:00:00Z", now), "in 2 days");
    assert.equal(relativeTime("2026-11-25T11:59:58Z", now), "just now");
    assert.equal(relativeTime("not a time", now), "not a time");
  });
});
