import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeSettingsChanges, settingsChanges } from "./settings-changes.ts";

describe("settingsChanges()", () => {
  it("settingsChanges() names added, changed and removed fields by path, lists compared whole", () => {
    const before =
      "external:\n  platform: {}\nsync:\n  toHost:\n    endpoints:\n      patches: [{path: a, expression: b}]\n";
    const after =
      "# new\nexternal:\n  platform:\n    project: web\nsync:\n  toHost:\n    endpoints:\n      patches: [{path: a, expression: c}]\n";
    assert.deepEqual(settingsChanges(before, after), {
      added: ["external.platform.project"],
      changed: ["sync.toHost.endpoints.patches"],
      removed: [],
    });
    assert.deepEqual(settingsChanges(before, "external:\n  platform: {}\n"), {
      added: [],
      changed: [],
      removed: ["sync"],
    });
  });

  it("settingsChanges() ignores comments and formatting; an empty text is no settings", () => {
    assert.deepEqual(settingsChanges("a: 1 # one\n", "a:   1\n"), { added: [], changed: [], removed: [] });
    assert.deepEqual(settingsChanges("", "sync: {}\n").added, ["sync"]);
  });

  it("describeSettingsChanges() says it in one line, or unchanged", () => {
    assert.equal(
      describeSettingsChanges({ added: ["c"], changed: ["a.b", "x"], removed: ["d"] }),
      "changed a.b, x; added c; removed d",
    );
    assert.equal(describeSettingsChanges({ added: [], changed: [], removed: [] }), "unchanged");
    assert.deepEqual(settingsChanges('a: {"x.y": 1}\n', 'a: {"x.y": 2}\n').changed, ['a["x.y"]']);
  });
});
