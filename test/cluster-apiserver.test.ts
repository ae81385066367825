// The cluster API server (core/v1 + rbac) over real HTTPS: kubectl, @kubernetes/client-node and plain requests
// against startClusterApiServer(), as the virtual cluster runtime and the stand-alone `virtualcluster apiserver` use it.

import assert from "node:assert/strict";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, KubeConfig, makeInformer, type V1Endpoints } from "@kubernetes/client-node";
import { parse } from "yaml";
import { ensureAdminToken } from "../src/cluster-apiserver/admin-token.ts";
import { type RunningClusterApiServer, startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { createCertificateAuthority, issueCertificate } from "../src/pki/certificate-authority.ts";
import { buildKubeconfig } from "../src/pki/kubeconfig.ts";
import { AuthClient } from "./support/auth-client.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";

const manifests = (namespace: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${namespace}
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
  - name: metrics
    port: 9090
---
apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: ${namespace}
spec:
  ports:
  - port: 5432
---
apiVersion: v1
kind: Endpoints
metadata:
  name: db
  namespace: ${namespace}
subsets:
- addresses:
  - ip: 10.1.2.3
  - ip: 10.1.2.4
  ports:
  - port: 5432
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: ${namespace}
stringData:
  password: hunter2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${namespace}
data:
  mode: fast
`;

describe("cluster API server over HTTPS", () => {
  let dataDir: string;
  let server: RunningClusterApiServer;
  let kubectl: Kubectl;
  let admin: AuthClient;
  let token: string;
  let clientCa: { certPem: string; keyPem: string };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vc-cluster-"));
    clientCa = await createCertificateAuthority({ commonName: "test-client-ca" });
    server = await startClusterApiServer({ dataDir, port: 0, clientCertificateAuthorities: [clientCa.certPem] });
    kubectl = new Kubectl(server.kubeconfigPath);
    token = await ensureAdminToken(dataDir);
    admin = new AuthClient(server.url, server.caPem);
  });
  after(async () => {
    admin?.agent.destroy();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const get = async (path: string) => (await admin.send("GET", path, { token })).json();

  it("startClusterApiServer() writes admin.kubeconfig and the admin token with mode 0600", async () => {
    assert.equal((await stat(server.kubeconfigPath)).mode & 0o777, 0o600);
    assert.equal((await stat(join(dataDir, "admin-token"))).mode & 0o777, 0o600);
    const config = parse(await (await import("node:fs/promises")).readFile(server.kubeconfigPath, "utf8"));
    assert.equal(config.clusters[0].cluster.server, server.url);
    assert.equal(config["current-context"], "virtualcluster-apiserver");
  });

  it("kubectl get namespaces lists default, kube-public and kube-system as Active", { skip: kubectlSkip }, async () => {
    const out = await kubectl.ok(["get", "namespaces"]);
    for (const name of ["default", "kube-public", "kube-system"])
      assert.match(out, new RegExp(`^${name}\\s+Active\\s`, "m"));
  });

  it("default/kubernetes Service and Endpoints describe the server, and come back when deleted", async () => {
    const service = await get("/api/v1/namespaces/default/services/kubernetes");
    assert.equal(service.spec.clusterIP, "10.96.0.1");
    assert.deepEqual(service.spec.ports, [{ name: "https", protocol: "TCP", port: 443, targetPort: server.port }]);
    const endpoints = await get("/api/v1/namespaces/default/endpoints/kubernetes");
    assert.deepEqual(endpoints.subsets, [
      { addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: server.port, protocol: "TCP" }] },
    ]);
    const removed = await admin.send("DELETE", "/api/v1/namespaces/default/endpoints/kubernetes", { token });
    assert.equal(removed.status, 200);
    await eventually(async () => {
      const again = await admin.send("GET", "/api/v1/namespaces/default/endpoints/kubernetes", { token });
      return again.status === 200 && again.json().metadata.uid !== endpoints.metadata.uid;
    }, "default/kubernetes endpoints to be recreated");
  });

  it("kubectl apply, get -o wide, describe and delete Services, Endpoints, Secrets and ConfigMaps", {
    skip: kubectlSkip,
  }, async () => {
    const applied = await kubectl.ok(["apply", "-f", "-"], manifests("shop"));
    assert.match(applied, /service\/web created/);
    assert.match(applied, /endpoints\/db created/);
    assert.match(applied, /secret\/creds created/);

    const services = await kubectl.ok(["get", "services", "-n", "shop", "-o", "wide"]);
    const [header, ...rows] = services.trim().split("\n");
    assert.match(header, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR$/);
    const web = rows.find((row) => row.startsWith("web "));
    assert.match(
      web ?? "",
      /^web\s+ClusterIP\s+10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+\s+<none>\s+80\/TCP,9090\/TCP\s+\S+\s+app=web$/,
    );
    assert.match(
      await kubectl.ok(["get", "endpoints", "db", "-n", "shop"]),
      /db\s+10\.1\.2\.3:5432,10\.1\.2\.4:5432\s/,
    );
    assert.match(await kubectl.ok(["get", "secrets", "-n", "shop"]), /creds\s+Opaque\s+1\s/);
    assert.match(await kubectl.ok(["get", "configmaps", "-n", "shop"]), /settings\s+1\s/);

    // stringData was merged into data and is not stored.
    const secret = parse(await kubectl.ok(["get", "secret", "creds", "-n", "shop", "-o", "yaml"]));
    assert.equal(secret.data.password, Buffer.from("hunter2").toString("base64"));
    assert.equal(secret.stringData, undefined);

    const described = await kubectl.ok(["describe", "service", "web", "-n", "shop"]);
    assert.match(described, /Selector:\s+app=web/);
    assert.match(described, /TargetPort:\s+8080\/TCP/);

    // An update by apply keeps the allocated cluster IP. (kubectl's client-side apply of an existing built-in
    // kind sends a strategic merge patch, which the server does not take yet: server-side apply here.)
    const before = parse(await kubectl.ok(["get", "service", "web", "-n", "shop", "-o", "yaml"]));
    await kubectl.ok(
      ["apply", "--server-side", "--force-conflicts", "-f", "-"],
      manifests("shop").replace("targetPort: 8080", "targetPort: 8081"),
    );
    const afterApply = parse(await kubectl.ok(["get", "service", "web", "-n", "shop", "-o", "yaml"]));
    assert.equal(afterApply.spec.clusterIP, before.spec.clusterIP);
    assert.equal(afterApply.spec.ports[0].targetPort, 8081);

    const deleted = await kubectl.ok(["delete", "service,endpoints,secret,configmap", "--all", "-n", "shop"]);
    assert.match(deleted, /service "web" deleted/);
    assert.match(await kubectl.ok(["get", "services,endpoints,secrets,configmaps", "-n", "shop"], ""), /^$/);
  });

  it("kubectl reports invalid objects with their field paths", { skip: kubectlSkip }, async () => {
    const bad = `apiVersion: v1
kind: Service
metadata:
  name: bad
  namespace: default
spec:
  ports:
  - port: 0
    protocol: HTTP
`;
    const result = await kubectl.run(["apply", "-f", "-"], bad);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /The Service "bad" is invalid/);
    assert.match(result.stderr, /spec\.ports\[0\]\.port: Invalid value: 0: must be between 1 and 65535, inclusive/);
    assert.match(
      result.stderr,
      /spec\.ports\[0\]\.protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"/,
    );
  });

  it('creating in a missing namespace answers 404 namespaces "x" not found', async () => {
    const reply = await admin.send("POST", "/api/v1/namespaces/nowhere/configmaps", {
      token,
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
    });
    assert.equal(reply.status, 404);
    assert.equal(reply.json().message, 'namespaces "nowhere" not found');
  });

  it("deleting a namespace marks it Terminating, refuses new content, and removes it once it is empty", async () => {
    const create = (path: string, body: object) => admin.send("POST", path, { token, body });
    assert.equal(
      (await create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "doomed" } }))
        .status,
      201,
    );
    for (const name of ["a", "b"]) {
      const reply = await create("/api/v1/namespaces/doomed/configmaps", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, finalizers: name === "b" ? ["example.com/hold"] : undefined },
      });
      assert.equal(reply.status, 201);
    }
    const role = await create("/apis/rbac.authorization.k8s.io/v1/namespaces/doomed/roles", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "reader" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
    });
    assert.equal(role.status, 201);

    const deleted = await admin.send("DELETE", "/api/v1/namespaces/doomed", { token });
    assert.equal(deleted.status, 200);
    const marked = deleted.json();
    assert.equal(marked.status.phase, "Terminating");
    assert.ok(marked.metadata.deletionTimestamp);
    assert.deepEqual(marked.spec.finalizers, ["kubernetes"]);

    // Held by the finalizer of configmap "b": everything else goes, the namespace stays Terminating.
    // The controller deletes kind after kind: the Role may go after the ConfigMap "a" is seen gone.
    await eventually(
      async () =>
        (await get("/api/v1/namespaces/doomed/configmaps")).items.length === 1 &&
        (await get("/apis/rbac.authorization.k8s.io/v1/namespaces/doomed/roles")).items.length === 0,
      "content deletion",
    );
    assert.equal((await get("/api/v1/namespaces/doomed")).status.phase, "Terminating");

    const refused = await create("/api/v1/namespaces/doomed/secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "late" },
    });
    assert.equal(refused.status, 403);
    assert.equal(
      refused.json().message,
      'secrets "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );

    const released = await admin.send("PATCH", "/api/v1/namespaces/doomed/configmaps/b", {
      token,
      body: { metadata: { finalizers: null } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(released.status, 200);
    await eventually(
      async () => (await admin.send("GET", "/api/v1/namespaces/doomed", { token })).status === 404,
      "the namespace to go",
    );
  });

  it("kubectl delete namespace waits until the namespace and its content are gone", { skip: kubectlSkip }, async () => {
    await kubectl.ok(["apply", "-f", "-"], manifests("shortlived"));
    assert.match(await kubectl.ok(["delete", "namespace", "shortlived"]), /namespace "shortlived" deleted/);
    const left = await kubectl.run(["get", "namespace", "shortlived"]);
    assert.match(left.stderr, /namespaces "shortlived" not found/);
    assert.equal((await get("/api/v1/namespaces/shortlived/services")).items.length, 0);
  });

  it("the immortal namespaces cannot be deleted", async () => {
    const reply = await admin.send("DELETE", "/api/v1/namespaces/kube-system", { token });
    assert.equal(reply.status, 403);
    assert.equal(reply.json().message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });

  it("RBAC: a client-certificate user is denied, then allowed by a RoleBinding; removing its CA ends access", {
    skip: kubectlSkip,
  }, async () => {
    const issued = await issueCertificate({
      ca: clientCa,
      commonName: "alice",
      organizations: ["developers"],
      usage: "client",
      validitySeconds: 3600,
    });
    const config = join(dataDir, "alice.kubeconfig");
    await writeFile(
      config,
      buildKubeconfig({
        name: "alice",
        server: server.url,
        certificateAuthorityPem: server.caPem,
        user: { clientCertificatePem: issued.certPem, clientKeyPem: issued.keyPem ?? "" },
      }),
      { mode: 0o600 },
    );
    const alice = new Kubectl(config);
    const denied = await alice.run(["get", "configmaps", "-n", "default"]);
    assert.match(
      denied.stderr,
      /configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"/,
    );
    await kubectl.ok(
      ["apply", "-f", "-"],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: developers-view
  namespace: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- kind: Group
  name: developers
`,
    );
    assert.match(await alice.ok(["get", "services", "-n", "default"]), /kubernetes/);
    const secrets = await alice.run(["get", "secrets", "-n", "default"]);
    assert.match(secrets.stderr, /secrets is forbidden/);
    const elsewhere = await alice.run(["get", "services", "-n", "kube-system"]);
    assert.match(elsewhere.stderr, /services is forbidden/);

    server.setClientCertificateAuthorities([]);
    const unknown = await alice.run(["get", "services", "-n", "default"]);
    assert.match(unknown.stderr, /You must be logged in to the server/);
    server.setClientCertificateAuthorities([clientCa.certPem]);
    assert.match(await alice.ok(["get", "services", "-n", "default"]), /kubernetes/);
  });

  it("selfsubjectaccessreviews answers for the caller", async () => {
    const review = (verb: string) =>
      admin.send("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        token,
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: { resourceAttributes: { verb, resource: "secrets", namespace: "default" } },
        },
      });
    const reply = await review("delete");
    assert.equal(reply.status, 201);
    assert.equal(reply.json().status.allowed, true);
    const anonymous = await admin.send("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      body: { spec: { resourceAttributes: { verb: "get", resource: "secrets" } } },
    });
    assert.equal(anonymous.status, 401);
  });

  it("@kubernetes/client-node: CoreV1Api lists and creates; an informer follows Endpoints", async () => {
    const config = new KubeConfig();
    config.loadFromFile(server.kubeconfigPath);
    const core = config.makeApiClient(CoreV1Api);
    const namespaces = await core.listNamespace();
    assert.ok(namespaces.items.some((n) => n.metadata?.name === "kube-system"));
    await core.createNamespace({ body: { metadata: { name: "informed" } } });

    const informer = makeInformer<V1Endpoints>(config, "/api/v1/namespaces/informed/endpoints", () =>
      core.listNamespacedEndpoints({ namespace: "informed" }),
    );
    const seen: string[] = [];
    informer.on("add", (e) => seen.push(`add ${e.metadata?.name}`));
    informer.on("update", (e) => seen.push(`update ${e.subsets?.[0]?.addresses?.[0]?.ip}`));
    informer.on("delete", (e) => seen.push(`delete ${e.metadata?.name}`));
    await informer.start();
    try {
      const created = await core.createNamespacedEndpoints({
        namespace: "informed",
        body: { metadata: { name: "ep" }, subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }] },
      });
      assert.equal(created.subsets?.[0]?.ports?.[0]?.protocol, "TCP");
      await core.replaceNamespacedEndpoints({
        name: "ep",
        namespace: "informed",
        body: { ...created, subsets: [{ addresses: [{ ip: "10.0.0.2" }], ports: [{ port: 80 }] }] },
      });
      await core.deleteNamespacedEndpoints({ name: "ep", namespace: "informed" });
      await eventually(() => seen.length >= 3, "the informer to see add, update and delete");
      assert.deepEqual(seen, ["add ep", "update 10.0.0.2", "delete ep"]);
    } finally {
      await informer.stop();
    }
  });

  it("int32 fields refuse one past either end with 422 naming the field, and take their maximum", async () => {
    const event = (name: string, count: number) => ({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name },
      involvedObject: { kind: "ConfigMap", name: "settings", namespace: "default" },
      reason: "Test",
      count,
    });
    const path = "/api/v1/namespaces/default/events";
    for (const count of [2 ** 31, -(2 ** 31) - 1]) {
      const reply = await admin.send("POST", path, { token, body: event("too-many", count) });
      assert.equal(reply.status, 422, reply.body);
      const causes = reply.json().details.causes as { field: string; message: string }[];
      assert.ok(
        causes.some(
          (c) =>
            c.field === "count" &&
            /count in body should be (less|greater) than or equal to -?214748364[78] \(int32\)$/.test(c.message),
        ),
        reply.body,
      );
    }
    // An Event's count may not be negative, so the lower end itself is checked by the unit tests (schema.test.ts).
    const most = await admin.send("POST", path, { token, body: event("most", 2 ** 31 - 1) });
    assert.equal(most.status, 201, most.body);
    assert.equal(most.json().count, 2 ** 31 - 1);
    const service = await admin.send("POST", "/api/v1/namespaces/default/services", {
      token,
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "wide" },
        spec: { ports: [{ port: 80, targetPort: 2 ** 31 }] },
      },
    });
    assert.equal(service.status, 422, service.body);
    assert.match(
      service.body,
      /spec.ports\[0\].targetPort in body should be less than or equal to 2147483647 \(int32\)/,
    );
  });
});
