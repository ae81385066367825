import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { LifecycleError } from "./lifecycle-error.ts";
import { checkSettings, editSettings, readSettings } from "./settings-file.ts";

describe("settings file", () => {
  it("checkSettings() reports every problem with its field path, in one LifecycleError line", async () => {
    const text = 'external:\n  platform:\n    apiKey:\n      createRBAC: "x"\nunknown: 1\n';
    await assert.rejects(
      checkSettings(text, "vc.yaml", "team-a"),
      (error: LifecycleError) =>
        error instanceof LifecycleError &&
        error.lines.length === 1 &&
        /^vc\.yaml: invalid settings: /.test(error.lines[0]) &&
        error.lines[0].includes('external.platform.apiKey.createRBAC: Invalid value: "x"') &&
        error.lines[0].includes("unknown: Forbidden: unknown field"),
    );
  });

  it("checkSettings() compiles patches, so a bad expression is found before anything runs", async () => {
    const text =
      'sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: "value +"\n';
    await assert.rejects(
      checkSettings(text, "f", "ns"),
      /sync\.toHost\.endpoints\.patches\[0\]\.expression: syntax error/,
    );
    assert.equal((await checkSettings("", "f", "ns")).external.platform, undefined);
    assert.equal(
      (await checkSettings("external:\n  platform:\n    apiKey: {}\n", "f", "ns")).external.platform?.apiKey?.namespace,
      "ns",
    );
  });

  it("readSettings() is empty settings without a file, and one line for a missing file", () => {
    assert.equal(readSettings(undefined), "");
    assert.throws(
      () => readSettings("/nonexistent/vc.yaml"),
      /\/nonexistent\/vc\.yaml: cannot read the settings file \(ENOENT\)/,
    );
  });

  it("editSettings() adds external.platform: {} and the project, keeping comments and everything else", () => {
    const text = "# mine\nsync:\n  toHost:\n    services:\n      enabled: true # on\n";
    const edited = editSettings(text, { ensurePlatform: true, project: "web" });
    assert.match(edited, /^# mine\n/);
    assert.match(edited, /enabled: true # on/);
    assert.deepEqual(parse(edited), {
      sync: { toHost: { services: { enabled: true } } },
      external: { platform: { project: "web" } },
    });
    assert.equal(editSettings(text, {}), text, "nothing to change: the text as it was");
    assert.deepEqual(parse(editSettings("", { ensurePlatform: true })), { external: { platform: {} } });
  });

  it("editSettings() keeps an existing platform section and sets no project where there is no platform", () => {
    const shared = "external:\n  platform:\n    apiKey:\n      namespace: shared\n";
    assert.deepEqual(parse(editSettings(shared, { ensurePlatform: true })), parse(shared));
    assert.deepEqual(parse(editSettings(shared, { project: "p" })).external.platform, {
      apiKey: { namespace: "shared" },
      project: "p",
    });
    assert.deepEqual(parse(editSettings("sync: {}\n", { project: "p" })), { sync: {} });
  });

  it("editSettings() changes nothing but external.platform, whatever the settings", () => {
    const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "external" && k !== "__proto__");
    const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.dictionary(key, fc.string(), { maxKeys: 3 }));
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { maxKeys: 5 }),
        fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
        (settings, project) => {
          const edited = parse(editSettings(stringify(settings), { ensurePlatform: true, project }));
          const { external, ...rest } = edited;
          assert.deepEqual(rest, JSON.parse(JSON.stringify(settings)));
          assert.deepEqual(external, { platform: project === undefined ? {} : { project } });
        },
      ),
    );
  });
});
