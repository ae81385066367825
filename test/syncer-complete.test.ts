// The syncer's complete behaviour between two real cluster API servers over HTTPS (issue 21): the preview of
// `virtualcluster patches apply` equals the live sync, patches never touch the syncer's marks, a patch that does
// not converge is stopped, name collisions are reported, referenced host objects are imported, ConfigMaps sync
// with `all: true`, the virtual Service shows the host cluster IP, the owner Service cleans up, and
// multi-namespace mode syncs namespaces.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, type CoreV1Event, type V1Endpoints } from "@kubernetes/client-node";
import { parse } from "yaml";
import { startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { loadKubeAccess } from "../src/virtualcluster/kube/kube-access.ts";
import { type LoadedSettings, loadSettings } from "../src/virtualcluster/settings/load.ts";
import { type Syncer, startSyncer } from "../src/virtualcluster/syncer/syncer.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../src/virtualcluster/translate/constants.ts";
import { createTranslator } from "../src/virtualcluster/translate/translator.ts";
import { runCli } from "./support/cli-run.ts";
import { kubeConfig, maybe } from "./support/kube-objects.ts";
import { eventually } from "./support/kubectl.ts";

type Server = Awaited<ReturnType<typeof startClusterApiServer>>;

const VC = "vc";
const HOST_NS = "vc-host";
const hostName = (name: string, namespace = "default") => `${name}-x-${namespace}-x-${VC}`;

const SETTINGS = `
sync:
  toHost:
    configMaps:
      all: true
    secrets:
      patches:
        - path: data.password
          expression: btoa(atob(value) + "-host")
    endpoints:
      patches:
        - path: metadata.labels
          labels: {}
        - path: metadata.annotations["secret-ref"]
          reference:
            apiVersion: v1
            kind: Secret
        - path: metadata.annotations.loop
          expression: String(context.hostObject?.metadata?.resourceVersion ?? 0)
        - path: subsets[*].addresses[*].hostname
          expression: 'value + "-" + context.vcluster.name'
`;

const service = (name: string, namespace = "default", clusterIP?: string) => ({
  metadata: { name, namespace },
  spec: { ports: [{ name: "http", port: 80 }], ...(clusterIP ? { clusterIP } : {}) },
});

const endpoints = (name: string, ip: string, namespace = "default", annotations: Record<string, string> = {}) =>
  ({
    metadata: { name, namespace, annotations, labels: { app: name, release: "r1" } },
    subsets: [{ addresses: [{ ip, hostname: "pod-a" }], ports: [{ name: "http", port: 8080 }] }],
  }) satisfies V1Endpoints;

/** `virtualcluster patches apply` of the Endpoints patches with the settings the syncer runs. */
const previewArgs = (dir: string) => [
  "patches",
  "apply",
  "-f",
  join(dir, "virtualcluster.yaml"),
  "--resource",
  "endpoints",
  "--name",
  VC,
  "--namespace",
  HOST_NS,
];

const hostWrites = (syncer: Syncer) =>
  Object.values(syncer.stats().writes.host)
    .flatMap((verbs) => Object.values(verbs))
    .reduce((sum, count) => sum + count, 0);

interface Pair {
  dir: string;
  virtualServer: Server;
  hostServer: Server;
  virtual: CoreV1Api;
  host: CoreV1Api;
  settings: LoadedSettings;
  syncer: Syncer;
  close(): Promise<void>;
}

/** A virtual and a host cluster API server with a syncer between them. */
async function startPair(settingsText: string, hostSetup?: (host: CoreV1Api) => Promise<void>): Promise<Pair> {
  const dir = await mkdtemp(join(tmpdir(), "vcp-syncer-complete-"));
  const virtualServer = await startClusterApiServer({ dataDir: join(dir, "v"), host: "127.0.0.1", port: 0, name: VC });
  const hostServer = await startClusterApiServer({ dataDir: join(dir, "h"), host: "127.0.0.1", port: 0, name: "h" });
  const virtualConfig = kubeConfig(virtualServer.kubeconfigPath);
  const hostConfig = kubeConfig(hostServer.kubeconfigPath);
  const virtual = virtualConfig.makeApiClient(CoreV1Api);
  const host = hostConfig.makeApiClient(CoreV1Api);
  await host.createNamespace({ body: { metadata: { name: HOST_NS } } });
  await hostSetup?.(host);
  await writeFile(join(dir, "virtualcluster.yaml"), settingsText);
  const settings = await loadSettings(settingsText, { namespace: HOST_NS });
  const syncer = await startSyncer({
    virtual: await loadKubeAccess({ file: virtualServer.kubeconfigPath }),
    host: await loadKubeAccess({ file: hostServer.kubeconfigPath }),
    name: VC,
    hostNamespace: HOST_NS,
    settings,
  });
  await syncer.synced();
  return {
    dir,
    virtualServer,
    hostServer,
    virtual,
    host,
    settings,
    syncer,
    async close() {
      await syncer.close();
      settings.dispose();
      await virtualServer.close();
      await hostServer.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function syncErrors(
  virtual: CoreV1Api,
  name: string,
  namespace = "default",
  kind = "Endpoints",
): Promise<CoreV1Event[]> {
  return (await virtual.listNamespacedEvent({ namespace })).items.filter(
    (event) => event.reason === "SyncError" && event.involvedObject.name === name && event.involvedObject.kind === kind,
  );
}

/** Server-set fields the preview cannot know. */
function comparable(object: Record<string, unknown>): unknown {
  const { metadata, ...rest } = object as { metadata: Record<string, unknown> };
  const { uid, resourceVersion, creationTimestamp, managedFields, ownerReferences, generation, ...kept } = metadata;
  return { ...rest, metadata: kept };
}

describe("syncer, single-namespace mode", () => {
  let pair: Pair;
  let ownerUid: string;
  const hostEndpoints = (name: string, namespace = "default") =>
    maybe(() => pair.host.readNamespacedEndpoints({ namespace: HOST_NS, name: hostName(name, namespace) }));
  const settled = () => eventually(() => pair.syncer.stats().queueDepth === 0, "the syncer's queue to drain");

  before(async () => {
    pair = await startPair(SETTINGS, async (host) => {
      const owner = await host.createNamespacedService({
        namespace: HOST_NS,
        body: { metadata: { name: VC }, spec: { ports: [{ port: 443 }] } },
      });
      ownerUid = owner.metadata?.uid ?? "";
    });
  });
  after(() => pair?.close());

  it("writes exactly what `patches apply` previews, with the marks after the patches and no label lost", async () => {
    const { virtual } = pair;
    await virtual.createNamespacedService({ namespace: "default", body: service("web") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("web", "10.1.0.1", "default", { note: "hello", "secret-ref": "db" }),
    });
    await eventually(async () => (await hostEndpoints("web")) !== undefined, "the host Endpoints");
    await settled();
    const live = (await hostEndpoints("web"))!;
    const source = await virtual.readNamespacedEndpoints({ namespace: "default", name: "web" });
    const objectFile = join(pair.dir, "web.json");
    await writeFile(objectFile, JSON.stringify(source));
    const preview = await runCli([...previewArgs(pair.dir), "-o", "json", objectFile]);
    assert.equal(preview.code, 0, preview.stderr);
    assert.deepEqual(comparable(JSON.parse(preview.stdout)), comparable(JSON.parse(JSON.stringify(live))));
    const labels = live.metadata?.labels ?? {};
    assert.equal(labels.app, "web");
    // `release` is rewritten once by the syncer; the labels patch on metadata.labels does not translate it again.
    assert.ok(Object.keys(labels).some((key) => key.startsWith("virtualcluster.platform.sh/label-vc-x-")));
    assert.equal(labels[MANAGED_BY_LABEL], VC);
    assert.equal(labels[NAMESPACE_LABEL], "default");
    const annotations = live.metadata?.annotations ?? {};
    assert.equal(annotations["virtualcluster.platform.sh/object-uid"], source.metadata?.uid);
    assert.equal(annotations["virtualcluster.platform.sh/managed-annotations"], "note\nsecret-ref");
    assert.equal(annotations["secret-ref"], hostName("db"));
    assert.deepEqual(
      live.metadata?.ownerReferences?.map((reference) => reference.uid),
      [ownerUid],
    );
  });

  it("stops a patch that never converges, with a SyncError event and counted in the stats", async () => {
    const { virtual, syncer } = pair;
    await virtual.createNamespacedService({ namespace: "default", body: service("looping") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("looping", "10.2.0.1", "default", { loop: "x" }),
    });
    await eventually(async () => (await syncErrors(virtual, "looping")).length > 0, "a SyncError on looping");
    const [event] = await syncErrors(virtual, "looping");
    assert.match(event.message ?? "", /rewritten 5 times in a row by its own sync/);
    assert.ok(syncer.stats().notConverging >= 1);
    assert.equal(syncer.stats().stalled, 1);
    await settled();
    const before = hostWrites(syncer);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await settled();
    assert.equal(hostWrites(syncer), before, "no more writes of the stopped object");
    // A change of the virtual object lets it try again (and stop again).
    await virtual.patchNamespacedEndpoints({
      namespace: "default",
      name: "looping",
      body: [{ op: "replace", path: "/metadata/annotations/loop", value: "y" }],
    });
    await eventually(() => syncer.stats().notConverging >= 2, "the second stop");
  });

  it("reports two virtual objects with the same host name instead of letting the last one win", async () => {
    const { virtual } = pair;
    for (const name of ["c", "b-x-c"]) await virtual.createNamespace({ body: { metadata: { name } } });
    // c/a-x-b and b-x-c/a both become a-x-b-x-c-x-vc on the host.
    await virtual.createNamespacedService({ namespace: "c", body: service("a-x-b", "c") });
    await virtual.createNamespacedEndpoints({ namespace: "c", body: endpoints("a-x-b", "10.3.0.1", "c") });
    const shared = hostName("a-x-b", "c");
    assert.equal(shared, hostName("a", "b-x-c"));
    await eventually(async () => (await hostEndpoints("a-x-b", "c")) !== undefined, "the first object's copy");
    await virtual.createNamespacedService({ namespace: "b-x-c", body: service("a", "b-x-c") });
    await virtual.createNamespacedEndpoints({ namespace: "b-x-c", body: endpoints("a", "10.3.0.2", "b-x-c") });
    await eventually(async () => (await syncErrors(virtual, "a", "b-x-c")).length > 0, "a SyncError on b-x-c/a");
    const [event] = await syncErrors(virtual, "a", "b-x-c");
    assert.match(event.message ?? "", /already the copy of virtual Endpoints "c\/a-x-b"/);
    await settled();
    const copy = await pair.host.readNamespacedEndpoints({ namespace: HOST_NS, name: shared });
    assert.equal(copy.subsets?.[0].addresses?.[0].ip, "10.3.0.1", "the first object's copy is untouched");
    assert.equal(copy.metadata?.annotations?.["virtualcluster.platform.sh/object-namespace"], "c");
    // The first one goes: the second one takes the name.
    await virtual.deleteNamespacedEndpoints({ namespace: "c", name: "a-x-b" });
    await eventually(
      async () => (await hostEndpoints("a-x-b", "c"))?.subsets?.[0].addresses?.[0].ip === "10.3.0.2",
      "the second object's copy",
    );
  });

  it("imports a referenced Secret that only the host has, keeps it in step and removes it with the reference", async () => {
    const { virtual, host } = pair;
    await host.createNamespacedSecret({
      namespace: HOST_NS,
      body: { metadata: { name: hostName("shared") }, data: { password: btoa("from-host") } },
    });
    await virtual.createNamespacedService({ namespace: "default", body: service("uses-shared") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("uses-shared", "10.4.0.1", "default", { "secret-ref": "shared" }),
    });
    const imported = () => maybe(() => virtual.readNamespacedSecret({ namespace: "default", name: "shared" }));
    await eventually(async () => (await imported()) !== undefined, "the imported Secret");
    const secret = (await imported())!;
    assert.equal(atob(secret.data?.password ?? ""), "from-host");
    assert.equal(secret.metadata?.labels?.["virtualcluster.platform.sh/imported-from"], HOST_NS);
    const hostCopy = await host.readNamespacedSecret({ namespace: HOST_NS, name: hostName("shared") });
    assert.equal(atob(hostCopy.data?.password ?? ""), "from-host", "the host object is never written by the sync");
    assert.equal(hostCopy.metadata?.labels?.[MANAGED_BY_LABEL], undefined);

    await host.patchNamespacedSecret({
      namespace: HOST_NS,
      name: hostName("shared"),
      body: [{ op: "replace", path: "/data/password", value: btoa("rotated") }],
    });
    await eventually(async () => atob((await imported())?.data?.password ?? "") === "rotated", "the host change");

    // A reference to a Secret that exists on neither side is reported on the referring object, not left silent.
    await virtual.createNamespacedService({ namespace: "default", body: service("uses-nothing") });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: endpoints("uses-nothing", "10.4.0.2", "default", { "secret-ref": "nowhere" }),
    });
    await eventually(async () => (await syncErrors(virtual, "uses-nothing")).length > 0, "a SyncError on uses-nothing");
    assert.match(
      (await syncErrors(virtual, "uses-nothing"))[0].message ?? "",
      /referenced Secret "default\/nowhere" exists neither in the virtual cluster nor on the host/,
    );

    const current = await virtual.readNamespacedEndpoints({ namespace: "default", name: "uses-shared" });
    delete current.metadata!.annotations!["secret-ref"];
    await virtual.replaceNamespacedEndpoints({ namespace: "default", name: "uses-shared", body: current });
    await eventually(async () => (await imported()) === undefined, "the imported Secret to go with the reference");
    assert.ok(await host.readNamespacedSecret({ namespace: HOST_NS, name: hostName("shared") }), "host object kept");
  });

  it("syncs a referenced virtual Secret with its patches, and every ConfigMap with all: true", async () => {
    const { virtual, host } = pair;
    await virtual.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "db", namespace: "default" }, data: { password: btoa("pw") } },
    });
    const hostSecret = () => maybe(() => host.readNamespacedSecret({ namespace: HOST_NS, name: hostName("db") }));
    await eventually(async () => (await hostSecret()) !== undefined, "the referenced Secret (by web)");
    assert.equal(atob((await hostSecret())?.data?.password ?? ""), "pw-host");

    await virtual.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "unreferenced", namespace: "default" }, data: { a: btoa("b") } },
    });
    await virtual.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "app-config", namespace: "default", labels: { tier: "web" } }, data: { k: "v" } },
    });
    const hostConfigMap = () =>
      maybe(() => host.readNamespacedConfigMap({ namespace: HOST_NS, name: hostName("app-config") }));
    await eventually(async () => (await hostConfigMap()) !== undefined, "the ConfigMap (all: true)");
    const configMap = (await hostConfigMap())!;
    assert.deepEqual(configMap.data, { k: "v" });
    assert.equal(configMap.metadata?.labels?.tier, "web");
    assert.equal(configMap.metadata?.labels?.[MANAGED_BY_LABEL], VC);
    await settled();
    assert.equal(
      await maybe(() => host.readNamespacedSecret({ namespace: HOST_NS, name: hostName("unreferenced") })),
      undefined,
      "Secrets are synced only when referenced",
    );
    await virtual.deleteNamespacedConfigMap({ namespace: "default", name: "app-config" });
    await eventually(async () => (await hostConfigMap()) === undefined, "the ConfigMap to be deleted");
  });

  it("shows the host Service's cluster IP on the virtual Service", async () => {
    const { virtual, host } = pair;
    await eventually(async () => {
      const [v, h] = await Promise.all([
        virtual.readNamespacedService({ namespace: "default", name: "web" }),
        maybe(() => host.readNamespacedService({ namespace: HOST_NS, name: hostName("web") })),
      ]);
      return h !== undefined && v.spec?.clusterIP === h.spec?.clusterIP;
    }, "the same cluster IP on both sides");
    // An address the host has given to something else: the host picks another, the virtual Service follows.
    const taken = await host.createNamespacedService({ namespace: HOST_NS, body: service("taken", HOST_NS) });
    const ip = taken.spec?.clusterIP ?? "";
    const created = await virtual.createNamespacedService({
      namespace: "default",
      body: service("moved", "default", ip),
    });
    assert.equal(created.spec?.clusterIP, ip);
    await eventually(async () => {
      const h = await maybe(() => host.readNamespacedService({ namespace: HOST_NS, name: hostName("moved") }));
      const v = await maybe(() => virtual.readNamespacedService({ namespace: "default", name: "moved" }));
      return h !== undefined && v?.spec?.clusterIP === h.spec?.clusterIP && h.spec?.clusterIP !== ip;
    }, "the virtual Service to take the host's cluster IP");
  });

  it("lets the host clean up every synced object when the virtual cluster's own host Service is deleted", async () => {
    const { host, syncer } = pair;
    await settled();
    await syncer.close(); // the virtual cluster is gone
    const managed = async () =>
      (await host.listNamespacedEndpoints({ namespace: HOST_NS, labelSelector: `${MANAGED_BY_LABEL}=${VC}` })).items
        .length;
    assert.ok((await managed()) > 0);
    await host.deleteNamespacedService({ namespace: HOST_NS, name: VC });
    await eventually(async () => (await managed()) === 0, "the garbage collector to delete the synced Endpoints");
  });
});

describe("syncer, multi-namespace mode (sync.toHost.namespaces.enabled)", () => {
  let pair: Pair;
  const translator = createTranslator({ name: VC, namespace: HOST_NS, multiNamespace: true });
  const MULTI = `
sync:
  toHost:
    namespaces:
      enabled: true
    endpoints:
      patches:
        - path: metadata.annotations["secret-ref"]
          reference:
            apiVersion: v1
            kind: Secret
`;
  before(async () => {
    pair = await startPair(MULTI);
  });
  after(() => pair?.close());

  it("gives each virtual namespace its own host namespace and keeps names", async () => {
    const { virtual, host } = pair;
    await virtual.createNamespace({ body: { metadata: { name: "team-a" } } });
    const hostNamespace = translator.hostNamespace("team-a");
    await eventually(
      async () => (await maybe(() => host.readNamespace({ name: hostNamespace }))) !== undefined,
      "the host namespace",
    );
    const namespace = await host.readNamespace({ name: hostNamespace });
    assert.equal(namespace.metadata?.labels?.[MANAGED_BY_LABEL], VC);
    assert.equal(namespace.metadata?.labels?.[NAMESPACE_LABEL], "team-a");

    await virtual.createNamespacedSecret({
      namespace: "team-a",
      body: { metadata: { name: "db", namespace: "team-a" }, data: { password: btoa("pw") } },
    });
    await virtual.createNamespacedService({ namespace: "team-a", body: service("web", "team-a") });
    await virtual.createNamespacedEndpoints({
      namespace: "team-a",
      body: endpoints("web", "10.9.0.1", "team-a", { "secret-ref": "db" }),
    });
    const hostEndpoints = () => maybe(() => host.readNamespacedEndpoints({ namespace: hostNamespace, name: "web" }));
    await eventually(async () => (await hostEndpoints()) !== undefined, "the Endpoints under its own name");
    // Names are not translated, so the reference keeps its value; the Secret it names syncs beside it.
    assert.equal((await hostEndpoints())?.metadata?.annotations?.["secret-ref"], "db");
    await eventually(
      async () =>
        (await maybe(() => host.readNamespacedSecret({ namespace: hostNamespace, name: "db" }))) !== undefined,
      "the referenced Secret in the same host namespace",
    );

    await virtual.deleteNamespace({ name: "team-a" });
    await eventually(async () => {
      const found = await maybe(() => host.readNamespace({ name: hostNamespace }));
      return found === undefined || found.metadata?.deletionTimestamp !== undefined;
    }, "the host namespace to be deleted with the virtual one");
  });

  it("`patches apply` previews multi-namespace mode", async () => {
    const objectFile = join(pair.dir, "ep.yaml");
    await writeFile(objectFile, JSON.stringify(endpoints("web", "10.9.0.2", "team-b", { "secret-ref": "db" })));
    const run = await runCli([...previewArgs(pair.dir), objectFile]);
    assert.equal(run.code, 0, run.stderr);
    const object = parse(run.stdout);
    assert.equal(object.metadata.name, "web");
    assert.equal(object.metadata.namespace, translator.hostNamespace("team-b"));
    assert.equal(object.metadata.annotations["secret-ref"], "db");
  });
});
