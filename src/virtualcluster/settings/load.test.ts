import assert from "node:assert/strict";
import { test } from "node:test";
import { loadSettings, parseSettings, SettingsError } from "./load.ts";

const problems = (text: string) => {
  try {
    loadSettings(text).dispose();
  } catch (error) {
    assert.ok(error instanceof SettingsError, String(error));
    return error.problems;
  }
  return [];
};

test("loadSettings() compiles the patch lists of endpoints and secrets", () => {
  const loaded = loadSettings(`
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations[*]
          expression: value.toUpperCase()
    secrets:
      patches:
        - path: data.password
          expression: btoa(atob(value))
          reverseExpression: value
`);
  assert.equal(loaded.patches.endpoints.patches.length, 1);
  assert.equal(loaded.patches.secrets.patches[0].field, "sync.toHost.secrets.patches[0]");
  assert.equal(loaded.settings.sync.toHost.services.enabled, true);
  loaded.dispose();
});

test("loadSettings() reports bad patches at load time with their list paths", () => {
  assert.deepEqual(
    problems(`
sync:
  toHost:
    endpoints:
      patches:
        - path: a
          expression: value
        - path: b
          expression: value
          labels: {}
        - path: c
          expression: "value +"
        - path: a
          reference: { kind: Secret }
`),
    [
      "sync.toHost.endpoints.patches[1] can only use one of: expression, labels or reference",
      "sync.toHost.endpoints.patches[2].expression: syntax error: Unexpected token (line 1, column 8)",
      'sync.toHost.endpoints.patches[0] and sync.toHost.endpoints.patches[3] have the same path "a"',
      "sync.toHost.endpoints.patches[3].reference.apiVersion: Required value: a reference patch needs apiVersion and kind",
    ],
  );
});

test("loadSettings() reports schema problems once, without compiling that list", () => {
  assert.deepEqual(
    problems("sync:\n  toHost:\n    secrets:\n      patches:\n        - path: [1]\n          expression: value\n"),
    ["sync.toHost.secrets.patches[0].path: Invalid value: [1]: must be a string"],
  );
});

test("loadSettings() reports YAML errors with their line and column", () => {
  const [problem] = problems("sync:\n  toHost: [\n");
  assert.match(problem, /^YAML line \d+, column \d+: /);
  assert.equal(problems("a: 1\na: 2\n")[0], "YAML line 2, column 1: Map keys must be unique");
  assert.match(problems("sync:\n  toHost:\n    x: : y\n")[0], /^YAML line 3, column 8: /);
});

test("parseSettings() accepts an empty file and JSON", () => {
  assert.equal(parseSettings("").sync.toHost.endpoints.enabled, true);
  assert.equal(
    parseSettings('{"sync": {"toHost": {"endpoints": {"enabled": false}, "services": {"enabled": false}}}}').sync.toHost
      .endpoints.enabled,
    false,
  );
  assert.throws(() => parseSettings("[]"), { message: "<root>: Invalid value: []: must be an object" });
});
