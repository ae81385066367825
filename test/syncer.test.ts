// The syncer between two real cluster API servers over HTTPS (a virtual one and a host one), through
// @kubernetes/client-node: translation, patches both ways, the selector rules, reference-synced Secrets, SyncError
// events, loop freedom (write counts, not timings) and a host API server restart.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, type CoreV1Event, type V1Endpoints } from "@kubernetes/client-node";
import { startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { loadKubeAccess } from "../src/virtualcluster/kube/kube-access.ts";
import { type LoadedSettings, loadSettings } from "../src/virtualcluster/settings/load.ts";
import { type Syncer, startSyncer } from "../src/virtualcluster/syncer/syncer.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../src/virtualcluster/translate/constants.ts";
import { kubeConfig, maybe } from "./support/kube-objects.ts";
import { eventually } from "./support/kubectl.ts";

const VC = "vc";
const HOST_NS = "vc-host";
const hostName = (name: string, namespace = "default") => `${name}-x-${namespace}-x-${VC}`;

const SETTINGS = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["note"]
          expression: '"host-" + value'
          reverseExpression: 'value.replace(/^host-/, "")'
        - path: subsets[*].addresses[*].hostname
          expression: 'value + "-" + context.vcluster.name'
        - path: metadata.annotations["secret-ref"]
          reference:
            apiVersion: v1
            kind: Secret
        - path: metadata.annotations.explode
          expression: value.no.such.field
    secrets:
      patches:
        - path: data.password
          expression: btoa(atob(value) + "-host")
`;

type Server = Awaited<ReturnType<typeof startClusterApiServer>>;

const service = (name: string, selector?: Record<string, string>) => ({
  metadata: { name, namespace: "default" },
  spec: { ports: [{ name: "http", port: 80 }], ...(selector ? { selector } : {}) },
});

const endpoints = (name: string, ip: string, annotations: Record<string, string> = {}): V1Endpoints => ({
  metadata: { name, namespace: "default", annotations, labels: { app: name, release: "r1" } },
  subsets: [
    {
      addresses: [{ ip, hostname: "pod-a", targetRef: { kind: "Pod", name: `${name}-0`, namespace: "default" } }],
      ports: [{ name: "http", port: 8080 }],
    },
  ],
});

/** Writes the syncer made on the host so far. */
const hostWrites = (syncer: Syncer) =>
  Object.values(syncer.stats().writes.host)
    .flatMap((verbs) => Object.values(verbs))
    .reduce((sum, count) => sum + count, 0);

describe("syncer between two cluster API servers", () => {
  const dirs: string[] = [];
  let virtualServer: Server;
  let hostServer: Server;
  let hostDir: string;
  let hostPort: number;
  let virtualDir: string;
  let virtualPort: number;
  let virtual: CoreV1Api;
  let host: CoreV1Api;
  let settings: LoadedSettings;
  let syncer: Syncer;
  let ownerUid: string;

  const hostEndpoints = (name: string) =>
    maybe(() => host.readNamespacedEndpoints({ namespace: HOST_NS, name: hostName(name) }));
  const hostService = (name: string) =>
    maybe(() => host.readNamespacedService({ namespace: HOST_NS, name: hostName(name) }));
  const syncErrors = async (name: string): Promise<CoreV1Event[]> =>
    (await virtual.listNamespacedEvent({ namespace: "default" })).items.filter(
      (event) => event.reason === "SyncError" && event.involvedObject.name === name,
    );
  /** Waits until the syncer has nothing queued or in flight. */
  const settled = () => eventually(() => syncer.stats().queueDepth === 0, "the syncer's queue to drain");

  before(async () => {
    virtualDir = await mkdtemp(join(tmpdir(), "vcp-syncer-virtual-"));
    hostDir = await mkdtemp(join(tmpdir(), "vcp-syncer-host-"));
    dirs.push(virtualDir, hostDir);
    virtualServer = await startClusterApiServer({ dataDir: virtualDir, host: "127.0.0.1", port: 0, name: VC });
    hostServer = await startClusterApiServer({ dataDir: hostDir, host: "127.0.0.1", port: 0, name: "host" });
    hostPort = hostServer.port;
    virtualPort = virtualServer.port;
    const virtualConfig = kubeConfig(virtualServer.kubeconfigPath);
    const hostConfig = kubeConfig(hostServer.kubeconfigPath);
    virtual = virtualConfig.makeApiClient(CoreV1Api);
    host = hostConfig.makeApiClient(CoreV1Api);
    await host.createNamespace({ body: { metadata: { name: HOST_NS } } });
    // The virtual cluster's own host Service: every synced object is owned by it.
    const owner = await host.createNamespacedService({
      namespace: HOST_NS,
      body: { metadata: { name: VC }, spec: { ports: [{ port: 443 }] } },
    });
    ownerUid = owner.metadata?.uid ?? "";
    settings = await loadSettings(SETTINGS, { namespace: HOST_NS });
    syncer = await startSyncer({
      virtual: await loadKubeAccess({ file: virtualServer.kubeconfigPath }),
      host: await loadKubeAccess({ file: hostServer.kubeconfigPath }),
      name: VC,
      hostNamespace: HOST_NS,
      settings,
    });
    await syncer.synced();
    assert.equal(syncer.stats().synced, true);
  });

  after(async () => {
    await syncer?.close();
    settings?.dispose();
    await virtualServer?.close();
    await hostServer?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("syncs a selector-less Service and its Endpoints with translated names, annotations, labels and patches", async () => {
    await virtual.createNamespacedService({ namespace: "default", body: service("web") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("web", "10.1.0.1", { note: "hello" }),
    });
    await eventually(async () => (await hostEndpoints("web")) !== undefined, "the host Endpoints");
    const synced = (await hostEndpoints("web"))!;
    const source = await virtual.readNamespacedEndpoints({ namespace: "default", name: "web" });
    const annotations = synced.metadata?.annotations ?? {};
    assert.equal(annotations.note, "host-hello", "expression applied toward the host");
    assert.equal(annotations["virtualcluster.platform.sh/object-name"], "web");
    assert.equal(annotations["virtualcluster.platform.sh/object-namespace"], "default");
    assert.equal(annotations["virtualcluster.platform.sh/object-uid"], source.metadata?.uid);
    assert.equal(annotations["virtualcluster.platform.sh/object-kind"], "/v1, Kind=Endpoints");
    assert.equal(annotations["virtualcluster.platform.sh/object-host-name"], hostName("web"));
    assert.equal(annotations["virtualcluster.platform.sh/object-host-namespace"], HOST_NS);
    assert.equal(annotations["virtualcluster.platform.sh/managed-annotations"], "note");
    const labels = synced.metadata?.labels ?? {};
    assert.equal(labels[MANAGED_BY_LABEL], VC);
    assert.equal(labels[NAMESPACE_LABEL], "default");
    assert.equal(labels.app, "web");
    assert.equal(labels.release, undefined, "reserved key rewritten");
    assert.ok(Object.keys(labels).some((key) => key.startsWith("virtualcluster.platform.sh/label-vc-x-")));
    const address = synced.subsets?.[0].addresses?.[0];
    assert.equal(address?.ip, "10.1.0.1");
    assert.equal(address?.hostname, "pod-a-vc");
    assert.deepEqual(
      { kind: address?.targetRef?.kind, name: address?.targetRef?.name, namespace: address?.targetRef?.namespace },
      { kind: "Pod", name: hostName("web-0"), namespace: HOST_NS },
    );
    assert.deepEqual(
      synced.metadata?.ownerReferences?.map((reference) => [reference.kind, reference.name, reference.uid]),
      [["Service", VC, ownerUid]],
    );
    const syncedService = await hostService("web");
    assert.equal(syncedService?.metadata?.labels?.[MANAGED_BY_LABEL], VC);
    assert.equal(syncedService?.spec?.selector, undefined);
  });

  it("follows updates and deletes of the virtual objects", async () => {
    const current = await virtual.readNamespacedEndpoints({ namespace: "default", name: "web" });
    current.subsets![0].addresses![0].ip = "10.1.0.2";
    await virtual.replaceNamespacedEndpoints({ namespace: "default", name: "web", body: current });
    await eventually(
      async () => (await hostEndpoints("web"))?.subsets?.[0].addresses?.[0].ip === "10.1.0.2",
      "the updated IP",
    );

    await virtual.createNamespacedService({ namespace: "default", body: service("gone") });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("gone", "10.2.0.1") });
    await eventually(async () => (await hostEndpoints("gone")) !== undefined, "the host Endpoints of gone");
    await virtual.deleteNamespacedEndpoints({ namespace: "default", name: "gone" });
    await eventually(async () => (await hostEndpoints("gone")) === undefined, "the host Endpoints to be deleted");
    await virtual.deleteNamespacedService({ namespace: "default", name: "gone" });
    await eventually(async () => (await hostService("gone")) === undefined, "the host Service to be deleted");
  });

  it("brings a host-side annotation change back to the virtual object through reverseExpression", async () => {
    await settled();
    const before = syncer.stats().writes;
    await host.patchNamespacedEndpoints({
      namespace: HOST_NS,
      name: hostName("web"),
      body: [
        { op: "replace", path: "/metadata/annotations/note", value: "host-from-host" },
        { op: "add", path: "/metadata/annotations/added-on-host", value: "yes" },
      ],
    });
    await eventually(async () => {
      const object = await virtual.readNamespacedEndpoints({ namespace: "default", name: "web" });
      return object.metadata?.annotations?.note === "from-host";
    }, "the reverse-patched annotation on the virtual object");
    const object = await virtual.readNamespacedEndpoints({ namespace: "default", name: "web" });
    assert.equal(object.metadata?.annotations?.["added-on-host"], "yes");
    await settled();
    const synced = await hostEndpoints("web");
    assert.equal(synced?.metadata?.annotations?.note, "host-from-host", "expression and reverseExpression cancel out");
    const after = syncer.stats().writes;
    assert.equal((after.virtual.Endpoints?.patch ?? 0) - (before.virtual.Endpoints?.patch ?? 0), 1);
  });

  it("writes nothing while idle or when a virtual change does not alter the desired host object", async () => {
    await settled();
    const before = syncer.stats();
    // A finalizer changes the virtual object but not its host copy (finalizers are reset).
    await virtual.patchNamespacedEndpoints({
      namespace: "default",
      name: "web",
      body: [{ op: "add", path: "/metadata/finalizers", value: ["example.com/hold"] }],
    });
    await eventually(() => syncer.stats().syncs > before.syncs, "the syncer to look at the change");
    await virtual.patchNamespacedEndpoints({
      namespace: "default",
      name: "web",
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    await eventually(() => syncer.stats().syncs > before.syncs + 1, "the syncer to look at the second change");
    // An idle period: informers may reconnect, nothing may be written.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await settled();
    const after = syncer.stats();
    assert.equal(after.totalWrites, before.totalWrites, JSON.stringify(after.writes));
  });

  it("leaves the Endpoints of a Service with a selector to the host", async () => {
    await virtual.createNamespacedService({ namespace: "default", body: service("selected", { app: "selected" }) });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("selected", "10.3.0.1") });
    await eventually(async () => (await hostService("selected")) !== undefined, "the host Service with a selector");
    await settled();
    assert.equal(await hostEndpoints("selected"), undefined);
    const selector = (await hostService("selected"))?.spec?.selector ?? {};
    assert.equal(selector.app, "selected");
    assert.equal(selector[MANAGED_BY_LABEL], VC);
    assert.equal(selector[NAMESPACE_LABEL], "default");

    // A selector added to a synced Service: the Endpoints we manage go away.
    const web = await virtual.readNamespacedService({ namespace: "default", name: "web" });
    web.spec!.selector = { app: "web" };
    await virtual.replaceNamespacedService({ namespace: "default", name: "web", body: web });
    await eventually(async () => (await hostEndpoints("web")) === undefined, "the managed host Endpoints to go");
    const again = await virtual.readNamespacedService({ namespace: "default", name: "web" });
    delete again.spec!.selector;
    await virtual.replaceNamespacedService({ namespace: "default", name: "web", body: again });
    await eventually(async () => (await hostEndpoints("web")) !== undefined, "the host Endpoints to come back");
  });

  it("syncs a Secret named by a reference patch, with the secrets patches, while it is referenced", async () => {
    await virtual.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "db-creds", namespace: "default" }, data: { password: btoa("pw") } },
    });
    await virtual.createNamespacedService({ namespace: "default", body: service("db") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("db", "10.4.0.1", { "secret-ref": "db-creds" }),
    });
    const secretName = hostName("db-creds");
    const hostSecret = () => maybe(() => host.readNamespacedSecret({ namespace: HOST_NS, name: secretName }));
    await eventually(async () => (await hostSecret()) !== undefined, "the referenced Secret on the host");
    const secret = (await hostSecret())!;
    assert.equal(Buffer.from(secret.data?.password ?? "", "base64").toString(), "pw-host");
    assert.equal(secret.metadata?.labels?.[MANAGED_BY_LABEL], VC);
    assert.equal((await hostEndpoints("db"))?.metadata?.annotations?.["secret-ref"], secretName);
    // Not referenced any more: the host copy goes.
    const current = await virtual.readNamespacedEndpoints({ namespace: "default", name: "db" });
    delete current.metadata!.annotations!["secret-ref"];
    await virtual.replaceNamespacedEndpoints({ namespace: "default", name: "db", body: current });
    await eventually(async () => (await hostSecret()) === undefined, "the unreferenced Secret to be deleted");
  });

  it("records a SyncError Warning event for a failing patch, retries it, and keeps syncing other objects", async () => {
    await virtual.createNamespacedService({ namespace: "default", body: service("broken") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("broken", "10.5.0.1", { explode: "boom" }),
    });
    await virtual.createNamespacedService({ namespace: "default", body: service("fine") });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("fine", "10.5.0.2") });
    await eventually(async () => (await syncErrors("broken")).length > 0, "a SyncError event on broken");
    const [event] = await syncErrors("broken");
    assert.equal(event.type, "Warning");
    assert.equal(event.involvedObject.kind, "Endpoints");
    assert.match(event.message ?? "", /sync\.toHost\.endpoints\.patches\[3\]\.expression/);
    await eventually(
      async () => ((await syncErrors("broken"))[0]?.count ?? 0) >= 2,
      "the retry to bump the event count",
    );
    assert.equal((await syncErrors("broken")).length, 1, "repeats bump one event");
    await eventually(async () => (await hostEndpoints("fine")) !== undefined, "the other Endpoints to sync");
    assert.equal(await hostEndpoints("broken"), undefined);
    assert.ok(syncer.stats().errors > 0);
  });

  it("never touches a host object without the managed-by label and reports the blocked name", async () => {
    const blocked = hostName("blocked");
    await host.createNamespacedEndpoints({
      namespace: HOST_NS,
      body: { metadata: { name: blocked, annotations: { owner: "someone-else" } }, subsets: [] },
    });
    await virtual.createNamespacedService({ namespace: "default", body: service("blocked") });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("blocked", "10.6.0.1") });
    await eventually(async () => (await syncErrors("blocked")).length > 0, "a SyncError event on blocked");
    assert.match((await syncErrors("blocked"))[0].message ?? "", /not managed by this virtual cluster/);
    const untouched = await host.readNamespacedEndpoints({ namespace: HOST_NS, name: blocked });
    assert.deepEqual(untouched.metadata?.annotations, { owner: "someone-else" });
    await virtual.deleteNamespacedEndpoints({ namespace: "default", name: "blocked" });
    await settled();
    assert.ok(await host.readNamespacedEndpoints({ namespace: HOST_NS, name: blocked }), "not deleted either");
  });

  it("survives a restart of the host API server", async () => {
    await settled();
    await hostServer.close();
    await virtual.createNamespacedService({ namespace: "default", body: service("during") });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("during", "10.7.0.1") });
    await virtual.deleteNamespacedEndpoints({ namespace: "default", name: "fine" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    hostServer = await startClusterApiServer({ dataDir: hostDir, host: "127.0.0.1", port: hostPort, name: "host" });
    await eventually(async () => (await hostEndpoints("during")) !== undefined, "the Endpoints made during the outage");
    await eventually(async () => (await hostService("during")) !== undefined, "the Service made during the outage");
    await eventually(
      async () => (await hostEndpoints("fine")) === undefined,
      "the Endpoints deleted while the host was down",
    );
    // And the watch works again: a fresh change flows.
    await virtual.createNamespacedService({ namespace: "default", body: service("after") });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("after", "10.7.0.2") });
    await eventually(async () => (await hostEndpoints("after")) !== undefined, "a change after the restart");
    await eventually(async () => (await hostService("after")) !== undefined, "the Service made after the restart");
  });

  it("survives a restart of the virtual API server", async () => {
    await settled();
    const before = hostWrites(syncer);
    await virtualServer.close();
    virtualServer = await startClusterApiServer({
      dataDir: virtualDir,
      host: "127.0.0.1",
      port: virtualPort,
      name: VC,
    });
    await virtual.createNamespacedService({ namespace: "default", body: service("later") });
    await virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints("later", "10.8.0.1") });
    await eventually(async () => (await hostEndpoints("later")) !== undefined, "a change after the virtual restart");
    await settled();
    // The re-list after the restart finds everything else in sync (the failing patch keeps bumping its event).
    const writes = JSON.stringify(syncer.stats().writes.host);
    assert.equal(hostWrites(syncer) - before, 2, `only the two new objects are written on the host: ${writes}`);
  });
});
