import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../../apimachinery/types.ts";
import {
  createVirtualClusterInstanceDefinition,
  type VirtualClusterInstance,
} from "../../apis/management/v1/virtualclusterinstance.ts";
import type { GenericStore } from "../../registry/store.ts";
import { openTestRegistry, type TestRegistry, testContext } from "../../registry/testing.ts";
import { INSTANCE_CA_PREFIX, InstanceCertificateAuthorities, instanceCaKey } from "./instance-cas.ts";

describe("InstanceCertificateAuthorities", () => {
  let env: TestRegistry;
  let store: GenericStore;
  let cas: InstanceCertificateAuthorities;
  const definition = createVirtualClusterInstanceDefinition({
    namespacePrefix: () => "p-",
    project: async (name) => ({ apiVersion: "management.platform.sh/v1", kind: "Project", metadata: { name } }),
    // The service is made once the registry (its storage) exists.
    authority: {
      prepare: (instance) => cas.prepare(instance),
      writesServerStatus: (context) => cas.writesServerStatus(context),
    },
  });
  const create = (name: string, dryRun = false) =>
    store.create(
      testContext(),
      "p-a",
      { apiVersion: "management.platform.sh/v1", kind: "VirtualClusterInstance", metadata: { name }, spec: {} },
      { dryRun },
    ) as Promise<VirtualClusterInstance>;
  const stored = async () => (await env.registry.storage.list({ prefix: INSTANCE_CA_PREFIX })).records;

  before(async () => {
    env = await openTestRegistry([definition]);
    store = env.store(definition);
    cas = new InstanceCertificateAuthorities(env.registry.storage, () => store);
  });
  after(() => env.close());

  it("signer() stores the CA published at create, bound to the instance's uid, and signs with its key", async () => {
    const instance = await create("vc1");
    const published = instance.status?.clientCertificateAuthority ?? "";
    const cert = new X509Certificate(published);
    assert.equal(cert.ca, true);
    assert.equal(await env.registry.storage.get(instanceCaKey("p-a", "vc1")), undefined, "nothing stored before use");
    const ca = await cas.signer(instance);
    assert.equal(ca.certPem, published);
    assert.ok(cert.checkPrivateKey(createPrivateKey(ca.keyPem)));
    const record = await env.registry.storage.get(instanceCaKey("p-a", "vc1"));
    assert.equal(JSON.parse(record?.value ?? "{}").uid, instance.metadata.uid);
    assert.equal((await cas.signer(instance)).keyPem, ca.keyPem, "the same CA on every use");
  });

  it("a dry-run create stores no CA key", async () => {
    const before = (await stored()).length;
    const dry = await create("dry", true);
    assert.ok(dry.status?.clientCertificateAuthority);
    assert.equal((await stored()).length, before);
  });

  it("signer() makes and publishes a new CA when the one made at create was lost (restart)", async () => {
    const instance = await create("lost");
    // A new service (as after a restart) has not kept the CA made for the create.
    cas = new InstanceCertificateAuthorities(env.registry.storage, () => store);
    const ca = await cas.signer(instance);
    assert.notEqual(ca.certPem, instance.status?.clientCertificateAuthority);
    const now = (await store.get(testContext(), { namespace: "p-a", name: "lost" })) as VirtualClusterInstance;
    assert.equal(now.status?.clientCertificateAuthority, ca.certPem);
    // The instance's own writes could not have done that: the published CA is server-owned.
    const forged = await store.patch(
      testContext(),
      { namespace: "p-a", name: "lost", subresource: "status" },
      "merge",
      { status: { clientCertificateAuthority: "forged" } },
      {},
    );
    assert.equal((forged.object as VirtualClusterInstance).status?.clientCertificateAuthority, ca.certPem);
  });

  it("prepare() keeps at most maxPending CAs waiting, however many dry runs come: the oldest is made again", async () => {
    cas = new InstanceCertificateAuthorities(env.registry.storage, () => store, { maxPending: 2 });
    const instance = await create("crowded");
    await create("dry-1", true);
    await create("dry-2", true);
    const ca = await cas.signer(instance);
    assert.notEqual(
      ca.certPem,
      instance.status?.clientCertificateAuthority,
      "its CA was forgotten, as after a restart",
    );
    const next = await create("next");
    await create("dry-3", true);
    assert.equal((await cas.signer(next)).certPem, next.status?.clientCertificateAuthority, "one behind: still kept");
    cas = new InstanceCertificateAuthorities(env.registry.storage, () => store);
  });

  it("remove() deletes the key of that instance only; removeOrphans() the keys of instances gone", async () => {
    const kept = await create("kept");
    const gone = await create("gone");
    await cas.signer(kept);
    await cas.signer(gone);
    await cas.remove("p-a", "kept", "another-uid");
    assert.ok(await env.registry.storage.get(instanceCaKey("p-a", "kept")));
    await cas.remove("p-a", "gone", gone.metadata.uid ?? "");
    assert.equal(await env.registry.storage.get(instanceCaKey("p-a", "gone")), undefined);
    await cas.removeOrphans(new Map([[instanceCaKey("p-a", "kept"), kept.metadata.uid ?? ""]]));
    assert.deepEqual(
      (await stored()).map((r) => r.key),
      [instanceCaKey("p-a", "kept")],
    );
  });

  it("no CA key is ever part of what the instance resource serves", async () => {
    const instance = (await create("served")) as KubeObject;
    await cas.signer(instance as VirtualClusterInstance);
    const text = JSON.stringify(await store.list(testContext(), {}));
    assert.doesNotMatch(text, /PRIVATE KEY/);
  });
});
