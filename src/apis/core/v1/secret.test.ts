import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { statusErrorOf, testContext } from "../../../registry/testing.ts";
import { type Secret, secretDefinition } from "./secret.ts";
import { type KindHarness, kindHarness } from "./testing.ts";

const definition = secretDefinition;
const secret = (name: string, fields: Partial<Secret>): Secret => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "default" },
  ...fields,
});
const b64 = (text: string) => Buffer.from(text).toString("base64");

describeResourceConformance({
  definition,
  sample: (name) => secret(name, { data: { token: b64("t") } }),
  changeSpec: (object) => {
    (object as Secret).data = { token: b64("changed") };
  },
});

describe("Secret", () => {
  let h: KindHarness;
  before(async () => {
    h = await kindHarness(definition);
  });
  after(() => h.close());

  it("create() merges stringData into data, never stores it, and defaults the type to Opaque", async () => {
    const created = (await h.create(
      secret("merged", { data: { a: b64("1"), b: b64("old") }, stringData: { b: "new" } }),
    )) as Secret;
    assert.deepEqual(created.data, { a: b64("1"), b: b64("new") });
    assert.equal(created.stringData, undefined);
    assert.equal(created.type, "Opaque");
    const stored = await h.env.registry.storage.get("/core/secrets/default/merged");
    assert.equal(stored?.value.includes("stringData"), false);
  });

  it("create() answers 400 for data that is not base64, without echoing it", async () => {
    const error = await statusErrorOf(h.create(secret("bad64", { data: { key: "not base64!" } })));
    assert.equal(error.code, 400);
    assert.equal(
      error.message,
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
    );
  });

  it("create() refuses invalid keys and missing keys of typed secrets", async () => {
    assert.deepEqual(await h.invalid(h.create(secret("keys", { data: { "bad key": b64("x") } }))), [
      `data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    ]);
    assert.deepEqual(
      await h.invalid(h.create(secret("tls", { type: "kubernetes.io/tls", data: { "tls.crt": b64("c") } }))),
      ["data[tls.key]: Required value"],
    );
    assert.deepEqual(
      await h.invalid(
        h.create(
          secret("docker", { type: "kubernetes.io/dockerconfigjson", data: { ".dockerconfigjson": b64("[]") } }),
        ),
      ),
      ['data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": must be a JSON object'],
    );
  });

  it("update() refuses a type change, and any data change once immutable", async () => {
    const created = (await h.create(secret("frozen", { data: { a: b64("1") }, immutable: true }))) as Secret;
    const retyped = { ...structuredClone(created), type: "kubernetes.io/basic-auth" };
    assert.deepEqual(await h.invalid(h.update(retyped)), [
      "data[username]: Required value",
      "data[password]: Required value",
      'type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
    ]);
    const changed = { ...structuredClone(created), data: { a: b64("2") } };
    assert.deepEqual(await h.invalid(h.update(changed)), [
      "data: Forbidden: field is immutable when `immutable` is set",
    ]);
    const thawed = { ...structuredClone(created), immutable: false };
    assert.deepEqual(await h.invalid(h.update(thawed)), [
      "immutable: Forbidden: field is immutable when `immutable` is set",
    ]);
    const labelled = structuredClone(created);
    labelled.metadata.labels = { still: "allowed" };
    assert.equal((await h.update(labelled)).metadata.labels?.still, "allowed");
  });

  it("list() selects by the type field", async () => {
    await h.create(secret("typed", { type: "example.com/custom", data: {} }));
    const store = h.env.store(definition);
    const listed = await store.list(testContext(), { namespace: "default", fieldSelector: "type=example.com/custom" });
    assert.deepEqual(
      listed.items.map((s) => s.metadata.name),
      ["typed"],
    );
  });
});
