import assert from "node:assert/strict";
import { test } from "node:test";
import type { V1Secret } from "@kubernetes/client-node";
import { ApiKeyNotFoundError, lookupApiKey } from "./api-key-lookup.ts";

// Secrets as a host cluster would return them; a missing one answers 404 like the API does.
function secrets(objects: Record<string, Record<string, string>>) {
  return {
    async readNamespacedSecret({ name, namespace }: { name: string; namespace: string }): Promise<V1Secret> {
      const data = objects[`${namespace}/${name}`];
      if (!data) throw Object.assign(new Error("not found"), { code: 404 });
      return { data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])) };
    },
  };
}

const shared = { apiKey: { secretName: "shared", namespace: "platform", createRBAC: true } };

test("lookupApiKey() prefers LICENSE, then the configured Secret, then the default Secret", async () => {
  const core = secrets({
    "platform/shared": { accessKey: "shared-key", host: "https://platform.example:8443/" },
    "vc-ns/virtualcluster-platform-api-key": { accessKey: "own-key", host: "own.example", project: "team" },
  });
  const configured = await lookupApiKey({ core, platform: shared, namespace: "vc-ns", env: {} });
  assert.equal(configured.accessKey, "shared-key");
  assert.equal(configured.host, "platform.example:8443", "scheme and trailing slash dropped");
  assert.equal(configured.project, "default");
  assert.equal(configured.source, "Secret platform/shared");

  const license = await lookupApiKey({ core, platform: shared, namespace: "vc-ns", env: { LICENSE: "env-key" } });
  assert.equal(license.accessKey, "env-key");
  assert.equal(license.host, "platform.example:8443");

  const dedicated = await lookupApiKey({ core, platform: {}, namespace: "vc-ns", env: {} });
  assert.equal(dedicated.accessKey, "own-key");
  assert.equal(dedicated.project, "team");
});

test("lookupApiKey() falls back to the default Secret and reports every place it looked", async () => {
  const fallback = await lookupApiKey({
    core: secrets({ "vc-ns/virtualcluster-platform-api-key": { accessKey: "own-key", host: "h" } }),
    platform: shared,
    namespace: "vc-ns",
    env: {},
  });
  assert.equal(fallback.accessKey, "own-key");
  await assert.rejects(
    lookupApiKey({
      core: secrets({ "platform/shared": { host: "h" } }),
      platform: shared,
      namespace: "vc-ns",
      env: {},
    }),
    (error: Error) =>
      error instanceof ApiKeyNotFoundError &&
      error.message.includes("Secret platform/shared (missing accessKey)") &&
      error.message.includes("Secret vc-ns/virtualcluster-platform-api-key (not found)"),
  );
});

test("lookupApiKey() reads insecure, CA data (PEM or base64) and the instance name", async () => {
  const pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  const found = await lookupApiKey({
    core: secrets({
      "vc-ns/virtualcluster-platform-api-key": {
        accessKey: "k",
        host: "h",
        insecure: "true",
        certificateAuthorityData: Buffer.from(pem).toString("base64"),
        name: "registered-name",
      },
    }),
    platform: {},
    namespace: "vc-ns",
    env: {},
  });
  assert.equal(found.insecure, true);
  assert.equal(found.certificateAuthorityPem, pem);
  assert.equal(found.name, "registered-name");
});
