import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { statusErrorOf } from "../../../registry/testing.ts";
import { type ConfigMap, configMapDefinition } from "./configmap.ts";
import { type KindHarness, kindHarness } from "./testing.ts";

const definition = configMapDefinition;
const configMap = (name: string, fields: Partial<ConfigMap>): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  ...fields,
});

describeResourceConformance({
  definition,
  sample: (name) => configMap(name, { data: { mode: "fast" } }),
  changeSpec: (object) => {
    (object as ConfigMap).data = { mode: "slow" };
  },
});

describe("ConfigMap", () => {
  let h: KindHarness;
  before(async () => {
    h = await kindHarness(definition);
  });
  after(() => h.close());

  it("create() keeps data and binaryData", async () => {
    const created = (await h.create(configMap("both", { data: { a: "1" }, binaryData: { b: "AAE=" } }))) as ConfigMap;
    assert.deepEqual([created.data, created.binaryData], [{ a: "1" }, { b: "AAE=" }]);
  });

  it("create() refuses bad keys, a key in both maps, and binaryData that is not base64", async () => {
    assert.deepEqual(
      await h.invalid(h.create(configMap("keys", { data: { "..hidden": "x", ok: "1" }, binaryData: { ok: "AA==" } }))),
      [
        `data[..hidden]: Invalid value: "..hidden": must not start with '..'`,
        'data[ok]: Invalid value: "ok": duplicate of key present in binaryData',
      ],
    );
    const error = await statusErrorOf(h.create(configMap("b64", { binaryData: { x: "%%%" } })));
    assert.equal(error.code, 400);
    assert.match(
      error.message,
      /^ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0$/,
    );
  });

  it("create() refuses more than 1 MiB of data", async () => {
    const big = "x".repeat(1024 * 1024);
    assert.deepEqual(await h.invalid(h.create(configMap("big", { data: { big } }))), [
      "data: Too long: must have at most 1048576 bytes",
    ]);
  });

  it("update() refuses data changes once immutable, but allows metadata changes", async () => {
    const created = (await h.create(configMap("frozen", { data: { a: "1" }, immutable: true }))) as ConfigMap;
    assert.deepEqual(
      await h.invalid(h.update({ ...structuredClone(created), data: { a: "2" }, binaryData: { b: "AA==" } })),
      [
        "data: Forbidden: field is immutable when `immutable` is set",
        "binaryData: Forbidden: field is immutable when `immutable` is set",
      ],
    );
    const labelled = structuredClone(created);
    labelled.metadata.labels = { ok: "yes" };
    assert.equal((await h.update(labelled)).metadata.labels?.ok, "yes");
  });
});
