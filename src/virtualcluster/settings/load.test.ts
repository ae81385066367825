import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "node:test";
import { loadSettings, parseSettings, SettingsError } from "./load.ts";

const problems = async (text: string) => {
  try {
    (await loadSettings(text)).dispose();
  } catch (error) {
    assert.ok(error instanceof SettingsError, String(error));
    return error.problems;
  }
  return [];
};

test("loadSettings() compiles the patch lists of endpoints and secrets", async () => {
  const loaded = await loadSettings(`
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

test("loadSettings() reports bad patches at load time with their list paths", async () => {
  assert.deepEqual(
    await problems(`
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

test("loadSettings() reports schema problems once, without compiling that list", async () => {
  assert.deepEqual(
    await problems(
      "sync:\n  toHost:\n    secrets:\n      patches:\n        - path: [1]\n          expression: value\n",
    ),
    ["sync.toHost.secrets.patches[0].path: Invalid value: [1]: must be a string"],
  );
});

test("loadSettings() reports YAML errors with their line and column", async () => {
  const [problem] = await problems("sync:\n  toHost: [\n");
  assert.match(problem, /^YAML line \d+, column \d+: /);
  assert.equal((await problems("a: 1\na: 2\n"))[0], "YAML line 2, column 1: Map keys must be unique");
  assert.match((await problems("sync:\n  toHost:\n    x: : y\n"))[0], /^YAML line 3, column 8: /);
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

test("loadSettings() loads the expression engine only for settings with an expression", () => {
  // In a fresh process: this file's other tests load the engine.
  const loadedAfter = (settings: string) =>
    execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { loadSettings } = await import("./settings/load.ts");
         const { engineLoaded } = await import("./patches/sandbox/engine.ts");
         (await loadSettings(${JSON.stringify(settings)})).dispose();
         console.log(engineLoaded());`,
      ],
      { cwd: resolve(import.meta.dirname, ".."), encoding: "utf8" },
    ).trim();
  assert.equal(loadedAfter(""), "false");
  assert.equal(loadedAfter("sync:\n  toHost:\n    services:\n      enabled: false\n"), "false");
  assert.equal(
    loadedAfter("sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: value\n"),
    "true",
  );
});
