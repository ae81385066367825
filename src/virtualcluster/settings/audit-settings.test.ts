import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withDefaults } from "./defaults.ts";

const problems = (audit: unknown) => withDefaults({ audit }).problems;

describe("virtual cluster audit settings", () => {
  it("withDefaults() keeps an audit section of the platform's shape as written", () => {
    const audit = { enabled: true, policy: { rules: [{ level: "Metadata", verbs: ["create"] }] }, maxBackups: 3 };
    const { settings, problems: found } = withDefaults({ audit });
    assert.deepEqual(found, []);
    assert.deepEqual(settings.audit, audit);
    assert.equal(withDefaults({}).settings.audit, undefined);
  });

  it("withDefaults() checks the audit section with the platform's rules and paths", () => {
    assert.deepEqual(problems({ enabled: "yes" }).length, 1);
    assert.match(problems({ level: 7 })[0], /^audit\.level: /);
    assert.match(problems({ level: 1, policy: { rules: [{ level: "Metadata" }] } })[0], /^audit\.level: .*policy/);
    assert.match(problems({ policy: { rules: [{ level: "Loud" }] } })[0], /^audit\.policy\.rules\[0\]\.level: /);
    assert.match(problems({ dataStoreTTL: 5 })[0], /^audit\.dataStoreTTL: Forbidden: set on the platform/);
    assert.match(problems("on")[0], /^audit: .*must be an object/);
  });
});
