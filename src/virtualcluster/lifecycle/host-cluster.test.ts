import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningClusterApiServer, startClusterApiServer } from "../../cluster-apiserver/cluster-api-server.ts";
import { loadKubeAccess } from "../kube/kube-access.ts";
import { KubeApiError } from "../kube/kube-api-error.ts";
import { KubeHttp } from "../kube/kube-http.ts";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";
import { createdFor, createdLabels, HostCluster, hostErrorLine } from "./host-cluster.ts";
import { loadHostKubeconfig } from "./host-kubeconfig.ts";
import { LifecycleError } from "./lifecycle-error.ts";

const SERVER = "https://10.0.0.1:6443";

describe("host cluster", () => {
  it("hostErrorLine() gives the Status message, or says what failed on the network", () => {
    const status = JSON.stringify({ kind: "Status", message: 'namespaces "x" is forbidden: no', code: 403 });
    assert.equal(hostErrorLine(SERVER, KubeApiError.fromResponse(403, status)), 'namespaces "x" is forbidden: no');
    assert.match(
      hostErrorLine(SERVER, KubeApiError.fromResponse(401, "")),
      /rejected the kubeconfig's credentials \(401\)/,
    );
    assert.equal(
      hostErrorLine(SERVER, KubeApiError.fromResponse(502, "<html>")),
      `the host cluster at ${SERVER} answered 502`,
    );
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    assert.equal(hostErrorLine(SERVER, refused), `cannot connect to the host cluster at ${SERVER}: connection refused`);
    const tls = new TypeError("fetch failed", {
      cause: Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
    });
    assert.match(hostErrorLine(SERVER, tls), /cannot verify the certificate of the host cluster at .*self-signed/);
  });

  it("createdFor() recognises only objects labelled for the same virtual cluster", () => {
    assert.equal(createdFor({ labels: createdLabels("dev") }, "dev"), true);
    assert.equal(createdFor({ labels: createdLabels("dev") }, "web"), false);
    assert.equal(createdFor({ labels: { "virtualcluster.platform.sh/virtualcluster": "dev" } }, "dev"), false);
    assert.equal(createdFor(undefined, "dev"), false);
  });
});

describe("HostCluster", () => {
  let dir: string;
  let server: RunningClusterApiServer;
  let http: KubeHttp;
  let host: HostCluster;
  const secret = (value: string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "settings", namespace: "team", labels: createdLabels("dev") },
    stringData: { value },
  });
  const BODIES: Record<string, (metadata: object) => object> = {
    services: (metadata) => ({ metadata, spec: { ports: [{ port: 80 }] } }),
    endpoints: (metadata) => ({ metadata, subsets: [{ addresses: [{ ip: "10.0.0.1" }] }] }),
    endpointslices: (metadata) => ({ metadata, addressType: "IPv4", endpoints: [] }),
    secrets: (metadata) => ({ metadata, data: {} }),
    configmaps: (metadata) => ({ metadata, data: { a: "b" } }),
  };
  const kindPath = (kind: string, namespace: string) =>
    `${kind === "endpointslices" ? "/apis/discovery.k8s.io/v1" : "/api/v1"}/namespaces/${namespace}/${kind}`;
  /** An object of `kind` in `namespace` labelled as the syncer of virtual cluster `owner` labels its host copies. */
  const synced = (kind: string, namespace: string, name: string, owner: string) =>
    http.request({
      method: "POST",
      path: kindPath(kind, namespace),
      body: BODIES[kind]({ name, namespace, labels: { [MANAGED_BY_LABEL]: owner } }),
    });
  const names = async (kind: string, namespace: string) =>
    (
      await http.request<{ items: { metadata: { name: string } }[] }>({
        method: "GET",
        path: kindPath(kind, namespace),
      })
    ).items
      .map((item) => item.metadata.name)
      .sort();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vc-host-cluster-"));
    server = await startClusterApiServer({ dataDir: dir, port: 0 });
    http = new KubeHttp(await loadKubeAccess({ file: server.kubeconfigPath }));
    host = await HostCluster.open(loadHostKubeconfig(server.kubeconfigPath));
  });
  after(async () => {
    host?.[Symbol.dispose]();
    http?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("HostCluster reaches the current context's host: a namespace made once, a Secret created then replaced", async () => {
    assert.equal(host.server, server.url.replace(/\/+$/, ""));
    assert.equal(await host.ensureNamespace("team"), true);
    assert.equal(await host.ensureNamespace("team"), false);
    assert.equal(await host.readSecret("team", "settings"), undefined);
    await host.applySecret(secret("one"));
    const first = await host.readSecret("team", "settings");
    assert.ok(createdFor(first?.metadata, "dev"));
    await host.applySecret(secret("two"));
    const second = await host.readSecret("team", "settings");
    assert.equal(Buffer.from(second?.data?.value ?? "", "base64").toString(), "two");
    assert.notEqual(second?.metadata?.resourceVersion, first?.metadata?.resourceVersion);
  });

  it("HostCluster.deleteSynced() deletes every kind its virtual cluster's syncer made, and nothing of another's", async () => {
    await host.ensureNamespace("synced");
    for (const kind of Object.keys(BODIES)) {
      await synced(kind, "synced", `${kind}-mine`, "dev");
      await synced(kind, "synced", `${kind}-theirs`, "web");
    }
    assert.equal(await host.deleteSynced("synced", "dev"), Object.keys(BODIES).length);
    for (const kind of Object.keys(BODIES)) {
      const left = (await names(kind, "synced")).filter((name) => name.startsWith(kind));
      assert.deepEqual(left, [`${kind}-theirs`], kind);
    }
  });

  it("HostCluster calls fail with one line: the host's Status message, or what failed on the network", async () => {
    await assert.rejects(
      host.call("create namespace", () => host.core.createNamespace({ body: { metadata: { name: "Not_Valid" } } })),
      (error: Error) => error instanceof LifecycleError && /^cannot create namespace: .*Not_Valid/.test(error.message),
    );
    // Without the kubeconfig's CA the host's certificate is not trusted.
    const copy = loadHostKubeconfig(server.kubeconfigPath);
    const document = JSON.parse(copy.text);
    delete document.clusters[0].cluster["certificate-authority-data"];
    using untrusted = await HostCluster.open({ ...copy, text: JSON.stringify(document) });
    await assert.rejects(
      untrusted.call("list namespaces", () => untrusted.core.listNamespace({})),
      /^LifecycleError: cannot list namespaces: cannot verify the certificate of the host cluster at https:/,
    );
  });
});
