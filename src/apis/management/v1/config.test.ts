import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { LAST_APPLIED } from "../../../config/last-applied.ts";
import { REDACTED } from "../../../config/redaction-marker.ts";
import { trustedConfigContext } from "../../../config/trusted-context.ts";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import { eventually } from "../../../utils/testing-eventually.ts";
import { CONFIG_NAME, configDefinition } from "./config.ts";

describeResourceConformance({
  definition: configDefinition({ singleton: false }),
  sample: (name) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "Config",
    metadata: { name },
    spec: { raw: "platformHost: platform.example.com\n" },
  }),
  changeSpec: (object) => {
    (object.spec as { raw: string }).raw = "platformHost: other.example.com\n";
  },
});

const SECRET_RAW = `auth:
  oidc:
    issuerUrl: https://idp.example.com
    clientId: platform
    clientSecret: oidc-client-secret
secretStore:
  auth: {token: vault-root-token}
`;
const SECRETS = /oidc-client-secret|vault-root-token/;

/** The value at a dotted path of an object (assertions on dynamic JSON). */
const field = (object: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], object);

const config = (raw: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: "management.platform.sh/v1",
  kind: "Config",
  metadata: { name: CONFIG_NAME },
  spec: { raw },
  ...extra,
});

describe("Config strategy", () => {
  let env: TestRegistry;
  let store: GenericStore;
  const ref = { name: CONFIG_NAME };

  before(async () => {
    env = await openTestRegistry([configDefinition()]);
    store = env.store(configDefinition());
  });
  after(() => env.close());

  const reset = async (raw: string, extra: Partial<KubeObject> = {}) => {
    try {
      const current = await store.get(trustedConfigContext("test"), ref);
      await store.update(
        trustedConfigContext("test"),
        ref,
        { ...config(raw, extra), metadata: { ...current.metadata, ...extra.metadata } },
        {},
      );
    } catch {
      await store.create(trustedConfigContext("test"), undefined, config(raw, extra), {});
    }
  };

  it("create() refuses any name but platform-config", async () => {
    const error = await statusErrorOf(
      store.create(testContext(), undefined, { ...config(""), metadata: { name: "other" } }, {}),
    );
    assert.equal(error.code, 422);
    assert.equal(error.status.details?.causes?.[0]?.field, "metadata.name");
    assert.match(error.message, /supported values: "platform-config"/);
    const generated = await statusErrorOf(
      store.create(testContext(), undefined, { ...config(""), metadata: { generateName: "cfg-" } }, {}),
    );
    assert.equal(generated.code, 422);
  });

  it("create() derives status from spec.raw with defaults and ignores a sent status", async () => {
    await reset("");
    const stored = await store.update(
      testContext(),
      ref,
      {
        ...(await store.get(testContext(), ref)),
        spec: { raw: "platformHost: p.example.com\n" },
        status: { platformHost: "forged" },
      },
      {},
    );
    assert.deepEqual(stored.status, {
      platformHost: "p.example.com",
      projectNamespacePrefix: "p-",
      auth: { loginAccessKeyTTLSeconds: 1728000 },
    });
  });

  it("update() refuses invalid YAML content with 422 causes inside spec.raw and stores nothing", async () => {
    await reset("platformHost: p.example.com\n");
    const before = await store.get(testContext(), ref);
    const error = await statusErrorOf(
      store.update(
        testContext(),
        ref,
        { ...before, spec: { raw: "auth:\n  groupsFilters: ['(']\naudit: {enabled: true}\n" } },
        {},
      ),
    );
    assert.equal(error.code, 422);
    assert.deepEqual(error.status.details?.causes?.map((c) => c.field).sort(), [
      "spec.raw.audit.path",
      "spec.raw.auth.groupsFilters[0]",
    ]);
    assert.match(error.message, /^Config.management.platform.sh "platform-config" is invalid: \[/);
    assert.equal((await store.get(testContext(), ref)).metadata.resourceVersion, before.metadata.resourceVersion);
  });

  it("update() returns deprecated and unknown fields as warnings", async () => {
    await reset("");
    const context = testContext();
    const current = await store.get(context, ref);
    await store.update(
      context,
      ref,
      { ...current, spec: { raw: "workspaceSubDomain: '*.w.example.com'\nextra: 1\n" } },
      {},
    );
    assert.deepEqual(context.warnings, [
      'unknown field "spec.raw.extra"',
      "spec.raw.workspaceSubDomain: workspaceSubDomain is deprecated and no longer used",
    ]);
  });

  it("reads never return a secret: get, list, watch, write responses, dry runs, managedFields, last-applied", async () => {
    const lastApplied = JSON.stringify(config(SECRET_RAW));
    await reset("");
    const current = await store.get(testContext(), ref);
    const seen: unknown[] = [];
    const watch = await store.watch(
      testContext(),
      { resourceVersion: current.metadata.resourceVersion },
      {
        send: (event) => {
          seen.push(event.object);
          return true;
        },
        end: () => {},
      },
    );
    const written = await store.update(
      testContext(),
      ref,
      { ...config(SECRET_RAW), metadata: { ...current.metadata, annotations: { [LAST_APPLIED]: lastApplied } } },
      {},
    );
    const dry = await store.patch(testContext(), ref, "merge", { metadata: { labels: { a: "b" } } }, { dryRun: true });
    const got = await store.get(testContext(), ref);
    const listed = await store.list(testContext(), {});
    await eventually(() => seen.length > 0, "a watch event");
    watch.close();
    assert.ok(seen.length > 0);
    for (const read of [written, dry.object, got, listed, ...seen]) {
      assert.doesNotMatch(JSON.stringify(read), SECRETS);
    }
    assert.match((got.spec as { raw: string }).raw, /clientSecret: <redacted>/);
    assert.equal(field(got, "status.secretStore.auth.token"), REDACTED);
    assert.match(got.metadata.annotations?.[LAST_APPLIED] ?? "", /<redacted>/);
    // Stored and visible to the platform itself:
    const trusted = await store.get(trustedConfigContext("test"), ref);
    assert.match(JSON.stringify(trusted.spec), /oidc-client-secret/);
    assert.doesNotMatch(trusted.metadata.annotations?.[LAST_APPLIED] ?? "", SECRETS);
  });

  it("update() with the redaction marker keeps the stored secrets; sending back a read changes nothing", async () => {
    await reset(SECRET_RAW);
    const read = await store.get(testContext(), ref);
    const again = await store.update(testContext(), ref, structuredClone(read), {});
    assert.equal(again.metadata.resourceVersion, read.metadata.resourceVersion);
    const edited = structuredClone(read);
    (edited.spec as { raw: string }).raw = `${(edited.spec as { raw: string }).raw}platformHost: p.example.com\n`;
    await store.update(testContext(), ref, edited, {});
    const trusted = await store.get(trustedConfigContext("test"), ref);
    assert.equal(field(trusted, "status.auth.oidc.clientSecret"), "oidc-client-secret");
    assert.equal(field(trusted, "status.secretStore.auth.token"), "vault-root-token");
    assert.equal(field(trusted, "status.platformHost"), "p.example.com");
  });

  it("patch() of spec.raw by JSON patch and merge patch re-derives status", async () => {
    await reset("");
    const json = await store.patch(
      testContext(),
      ref,
      "json",
      [{ op: "replace", path: "/spec/raw", value: "projectNamespacePrefix: proj-\n" }],
      {},
    );
    assert.equal(field(json.object, "status.projectNamespacePrefix"), "proj-");
    const merge = await store.patch(
      testContext(),
      ref,
      "merge",
      { spec: { raw: "authenticateVersionEndpoint: true\n" } },
      {},
    );
    assert.equal(field(merge.object, "status.authenticateVersionEndpoint"), true);
    assert.equal(field(merge.object, "status.projectNamespacePrefix"), "p-");
  });

  it("update() answers 403 when the stored config disables the config endpoint; the platform's own writes pass", async () => {
    await reset("disableConfigEndpoint: true\n");
    const current = await store.get(testContext(), ref);
    const error = await statusErrorOf(store.update(testContext(), ref, { ...current, spec: { raw: "" } }, {}));
    assert.equal(error.code, 403);
    assert.match(error.message, /managed through its config file/);
    const patch = await statusErrorOf(store.patch(testContext(), ref, "merge", { spec: { raw: "" } }, {}));
    assert.equal(patch.code, 403);
    const own = await store.patch(trustedConfigContext("test"), ref, "merge", { spec: { raw: "" } }, {});
    assert.equal(field(own.object, "status.disableConfigEndpoint"), undefined);
  });
});
