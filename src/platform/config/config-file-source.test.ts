import assert from "node:assert/strict";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { CONFIG_NAME, configDefinition } from "../../apis/management/v1/config.ts";
import { defaultSettings, LiveSettings } from "../../config/settings.ts";
import { openTestRegistry, type TestRegistry, testContext } from "../../registry/testing.ts";
import type { ResourceStore } from "../../registry/types.ts";
import { eventually } from "../../utils/testing-eventually.ts";
import { ConfigController } from "./config-controller.ts";
import { ConfigFileSource } from "./config-file-source.ts";

/** A Config store, its live settings and a source reading `content` from a file of its own. */
async function openSource(content: string, emptySettleMs: number) {
  const dir = await mkdtemp(join(tmpdir(), "config-file-"));
  const file = join(dir, "platform.yaml");
  await writeFile(file, content);
  const definition = configDefinition();
  const env = await openTestRegistry([definition]);
  const store = env.store(definition);
  const settings = new LiveSettings(defaultSettings());
  const controller = await ConfigController.start({ store, name: CONFIG_NAME, settings });
  const logLines: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => logLines.push(line) });
  const source = await ConfigFileSource.start({
    path: file,
    store,
    name: CONFIG_NAME,
    logger,
    debounceMs: 20,
    emptySettleMs,
  });
  const logged = (message: string) => logLines.filter((line) => line.includes(message)).length;
  return {
    file,
    settings,
    logged,
    async close() {
      source.close();
      controller.close();
      await env.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe("ConfigFileSource", () => {
  let env: TestRegistry;
  let store: ResourceStore;
  let settings: LiveSettings;
  let controller: ConfigController;
  let source: ConfigFileSource;
  let dir: string;
  let file: string;
  const logLines: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "config-file-"));
    file = join(dir, "platform.yaml");
    await writeFile(
      file,
      "projectNamespacePrefix: first-\nauth:\n  oidc: {issuerUrl: 'https://i', clientId: a, clientSecret: file-secret}\n",
    );
    const definition = configDefinition();
    env = await openTestRegistry([definition]);
    store = env.store(definition);
    settings = new LiveSettings(defaultSettings());
    controller = await ConfigController.start({ store, name: CONFIG_NAME, settings });
    const logger = pino({ level: "info" }, { write: (line: string) => logLines.push(line) });
    source = await ConfigFileSource.start({ path: file, store, name: CONFIG_NAME, logger, debounceMs: 20 });
  });
  after(async () => {
    source.close();
    controller.close();
    await env.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("ConfigFileSource.start() writes the file into the Config before returning", async () => {
    const stored = await store.get(testContext(), { name: CONFIG_NAME });
    assert.match((stored.spec as { raw: string }).raw, /first-/);
    await eventually(() => settings.current().projectNamespacePrefix === "first-", "the first file");
  });

  it("ConfigFileSource applies a changed file without a restart", async () => {
    await writeFile(file, "projectNamespacePrefix: second-\n");
    await eventually(() => settings.current().projectNamespacePrefix === "second-", "the changed file");
  });

  it("ConfigFileSource follows a file replaced by rename, as editors and ConfigMap mounts do", async () => {
    const temporary = join(dir, ".platform.yaml.tmp");
    await writeFile(temporary, "projectNamespacePrefix: renamed-\n");
    await rename(temporary, file);
    await eventually(() => settings.current().projectNamespacePrefix === "renamed-", "the renamed file");
  });

  it("ConfigFileSource logs invalid content by field path, without values, and keeps the config in force", async () => {
    await writeFile(
      file,
      "projectNamespacePrefix: Bad_Prefix\nauth:\n  oidc: {issuerUrl: 'https://i', clientId: a, clientSecret: leaked-if-logged}\n",
    );
    await eventually(() => logLines.some((line) => line.includes("config file rejected")), "the rejection log line");
    const line = logLines.find((l) => l.includes("config file rejected")) ?? "";
    assert.match(line, /spec\.raw\.projectNamespacePrefix/);
    assert.doesNotMatch(logLines.join("\n"), /leaked-if-logged|file-secret/);
    assert.equal(settings.current().projectNamespacePrefix, "renamed-");
  });

  it("ConfigFileSource.reload() skips unchanged content", async () => {
    await writeFile(file, "projectNamespacePrefix: third-\n");
    await eventually(() => settings.current().projectNamespacePrefix === "third-", "the valid file again");
    assert.deepEqual(await source.reload(), { ok: "unchanged" });
  });
});

describe("ConfigFileSource and an emptied file", () => {
  it("ConfigFileSource never applies the empty file an in-place write shows between its truncation and its write", async () => {
    // A settle far longer than the test: the empty read can only wait.
    const opened = await openSource("projectNamespacePrefix: first-\n", 600_000);
    try {
      const applied = opened.logged("config file applied");
      await writeFile(opened.file, "");
      await eventually(() => opened.logged("config file empty") > 0, "the empty file seen");
      await writeFile(opened.file, "projectNamespacePrefix: written-\n");
      await eventually(() => opened.settings.current().projectNamespacePrefix === "written-", "the written file");
      assert.equal(opened.logged("config file applied"), applied + 1, "only the written content was applied");
    } finally {
      await opened.close();
    }
  });

  it("ConfigFileSource applies a file that stays empty: every setting at its default", async () => {
    const opened = await openSource("projectNamespacePrefix: first-\n", 50);
    try {
      await eventually(() => opened.settings.current().projectNamespacePrefix === "first-", "the first file");
      await writeFile(opened.file, "");
      await eventually(
        () => opened.settings.current().projectNamespacePrefix === defaultSettings().projectNamespacePrefix,
        "the defaults",
      );
    } finally {
      await opened.close();
    }
  });
});
