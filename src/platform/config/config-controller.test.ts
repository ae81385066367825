import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONFIG_NAME, configDefinition } from "../../apis/management/v1/config.ts";
import { defaultSettings, LiveSettings } from "../../config/settings.ts";
import { openTestRegistry, type TestRegistry, testContext } from "../../registry/testing.ts";
import type { ResourceStore } from "../../registry/types.ts";
import { ConfigController } from "./config-controller.ts";

describe("ConfigController", () => {
  let env: TestRegistry;
  let store: ResourceStore;
  let settings: LiveSettings;
  let controller: ConfigController;

  before(async () => {
    const definition = configDefinition();
    env = await openTestRegistry([definition]);
    store = env.store(definition);
    const seed = defaultSettings("127.0.0.1");
    seed.auth.accessKeyMaxTTLSeconds = 900; // as `--access-key-max-ttl-seconds 900` would
    settings = new LiveSettings(seed);
    controller = await ConfigController.start({ store, name: CONFIG_NAME, settings });
  });
  after(async () => {
    controller.close();
    await env.close();
  });

  const write = async (raw: string) => {
    const result = await store.patch(testContext(), { name: CONFIG_NAME }, "merge", { spec: { raw } }, {});
    await controller.waitFor(Number(result.object.metadata.resourceVersion));
  };

  it("ConfigController.start() creates the empty singleton and keeps the seeded settings", async () => {
    const stored = await store.get(testContext(), { name: CONFIG_NAME });
    assert.deepEqual(stored.spec, {});
    assert.doesNotMatch(
      JSON.stringify(stored.metadata.managedFields),
      /f:raw/,
      "a first apply of spec.raw has no conflict",
    );
    assert.equal(settings.current().auth.accessKeyMaxTTLSeconds, 900);
    assert.equal(settings.current().platformHost, "127.0.0.1");
  });

  it("ConfigController applies each write to the live settings, and unset fields fall back to the seed", async () => {
    await write(
      "auth:\n  accessKeyMaxTTLSeconds: 60\n  password: {disabled: true}\nprojectNamespacePrefix: team-\nauthenticateVersionEndpoint: true\n",
    );
    let current = settings.current();
    assert.equal(current.auth.accessKeyMaxTTLSeconds, 60);
    assert.equal(current.auth.passwordLoginDisabled, true);
    assert.equal(current.projectNamespacePrefix, "team-");
    assert.equal(current.authenticateVersionEndpoint, true);
    await write("audit: {enabled: true, path: /tmp/audit.log, level: 2}\n");
    current = settings.current();
    assert.equal(current.auth.accessKeyMaxTTLSeconds, 900);
    assert.equal(current.auth.passwordLoginDisabled, false);
    assert.equal(current.projectNamespacePrefix, "p-");
    assert.deepEqual(current.audit, { enabled: true, path: "/tmp/audit.log", level: 2, maxSize: 100 });
  });

  it("ConfigController.current() holds the full config, secrets included, for in-process use", async () => {
    await write("secretStore:\n  auth: {token: t0k3n}\n");
    const auth = controller.current().secretStore?.auth as { token?: string } | undefined;
    assert.equal(auth?.token, "t0k3n");
  });

  it("ConfigController notifies settings listeners within one write (no polling)", async () => {
    const seen: string[] = [];
    const off = settings.onChange((next) => seen.push(next.projectNamespacePrefix));
    await write("projectNamespacePrefix: fast-\n");
    off();
    assert.deepEqual(seen, ["fast-"]);
  });
});
