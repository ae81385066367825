// kubectl's typed clients send Kubernetes protobuf bodies (Content-Type application/vnd.kubernetes.protobuf) for
// built-in kinds. Against the cluster API server over real HTTPS: the imperative `kubectl create` commands, then
// delete, label and annotate, each read back with `kubectl get -o json`; and raw protobuf requests as other typed
// clients send them (DeleteOptions, unknown fields, malformed bytes).

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureAdminToken } from "../src/cluster-apiserver/admin-token.ts";
import { type RunningClusterApiServer, startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { envelope, WireWriter } from "../src/http/protobuf/testing.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";

const PROTOBUF = "application/vnd.kubernetes.protobuf";
const b64 = (text: string) => Buffer.from(text).toString("base64");

interface RawReply {
  status: number;
  contentType: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: tests read replies field by field
  json: any;
}

describe("kubectl with protobuf request bodies", { skip: kubectlSkip }, () => {
  let dataDir: string;
  let server: RunningClusterApiServer;
  let kubectl: Kubectl;
  let token: string;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vc-protobuf-"));
    server = await startClusterApiServer({ dataDir, port: 0 });
    kubectl = new Kubectl(server.kubeconfigPath);
    token = await ensureAdminToken(dataDir);
  });
  after(async () => {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  // biome-ignore lint/suspicious/noExplicitAny: objects are read field by field
  const getJson = async (...args: string[]): Promise<any> =>
    JSON.parse(await kubectl.ok(["get", ...args, "-o", "json"]));

  /** One request with a binary body, as a typed client sends it (protobuf first, JSON accepted). */
  function send(method: string, path: string, body?: Buffer): Promise<RawReply> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: `${PROTOBUF},application/json`,
    };
    if (body) {
      headers["content-type"] = PROTOBUF;
      // Node sends a DELETE body without framing unless told its length.
      headers["content-length"] = String(body.length);
    }
    return new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method, headers, ca: server.caPem, agent: false }, (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"], json: JSON.parse(text) }),
        );
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  it("kubectl create namespace sends protobuf and gets a JSON answer it reads", async () => {
    const result = await kubectl.run(["create", "namespace", "team-a", "-v=8"]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^namespace\/team-a created$/m);
    assert.match(result.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    assert.match(result.stderr, /Response Status: 201 Created/);
    const namespace = await getJson("namespace", "team-a");
    assert.equal(namespace.apiVersion, "v1");
    assert.equal(namespace.kind, "Namespace");
    assert.equal(namespace.metadata.name, "team-a");
    assert.match(namespace.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(namespace.spec, { finalizers: ["kubernetes"] });
    assert.equal(namespace.status.phase, "Active");
  });

  it("kubectl create secret generic --from-literal stores the values base64-encoded", async () => {
    await kubectl.ok(["create", "secret", "generic", "creds", "-n", "team-a", "--from-literal=username=admin"]);
    await kubectl.ok(["create", "secret", "generic", "typed", "-n", "team-a", "--from-literal=p=s3cr=t", "--type=x/y"]);
    const secret = await getJson("secret", "creds", "-n", "team-a");
    assert.equal(secret.metadata.namespace, "team-a");
    assert.deepEqual(secret.data, { username: b64("admin") });
    assert.equal(secret.type, "Opaque");
    const typed = await getJson("secret", "typed", "-n", "team-a");
    assert.deepEqual(typed.data, { p: b64("s3cr=t") });
    assert.equal(typed.type, "x/y");
  });

  it("kubectl create configmap keeps text in data and binary files in binaryData", async () => {
    const file = join(dataDir, "blob.bin");
    await writeFile(file, Buffer.from([0, 1, 255, 10]));
    await kubectl.ok([
      "create",
      "configmap",
      "settings",
      "-n",
      "team-a",
      "--from-literal=color=blue",
      "--from-literal=size=10",
      `--from-file=blob=${file}`,
    ]);
    const configMap = await getJson("configmap", "settings", "-n", "team-a");
    assert.deepEqual(configMap.data, { color: "blue", size: "10" });
    assert.deepEqual(configMap.binaryData, { blob: "AAH/Cg==" });
  });

  it("kubectl create serviceaccount", async () => {
    assert.match(
      await kubectl.ok(["create", "serviceaccount", "builder", "-n", "team-a"]),
      /serviceaccount\/builder created/,
    );
    const account = await getJson("serviceaccount", "builder", "-n", "team-a");
    assert.equal(account.kind, "ServiceAccount");
    assert.equal(account.metadata.name, "builder");
    assert.equal(account.metadata.namespace, "team-a");
  });

  it("kubectl create service clusterip and nodeport carry ports, target ports and the selector", async () => {
    await kubectl.ok(["create", "service", "clusterip", "web", "-n", "team-a", "--tcp=80:8080", "--tcp=443:https"]);
    const web = await getJson("service", "web", "-n", "team-a");
    assert.deepEqual(web.metadata.labels, { app: "web" });
    assert.equal(web.spec.type, "ClusterIP");
    assert.deepEqual(web.spec.selector, { app: "web" });
    assert.deepEqual(web.spec.ports, [
      { name: "80-8080", protocol: "TCP", port: 80, targetPort: 8080 },
      { name: "443-https", protocol: "TCP", port: 443, targetPort: "https" },
    ]);
    assert.match(web.spec.clusterIP, /^10\.\d+\.\d+\.\d+$/);

    await kubectl.ok(["create", "service", "nodeport", "np", "-n", "team-a", "--tcp=80:8080", "--node-port=30080"]);
    const nodePort = await getJson("service", "np", "-n", "team-a");
    assert.equal(nodePort.spec.type, "NodePort");
    assert.deepEqual(nodePort.spec.ports, [
      { name: "80-8080", protocol: "TCP", port: 80, targetPort: 8080, nodePort: 30080 },
    ]);

    await kubectl.ok(["create", "service", "clusterip", "headless", "-n", "team-a", "--clusterip=None"]);
    assert.equal((await getJson("service", "headless", "-n", "team-a")).spec.clusterIP, "None");
  });

  it("kubectl create role, rolebinding, clusterrole and clusterrolebinding", async () => {
    await kubectl.ok([
      "create",
      "role",
      "reader",
      "-n",
      "team-a",
      "--verb=get,list",
      "--resource=secrets,configmaps",
      "--resource-name=a",
    ]);
    const role = await getJson("role", "reader", "-n", "team-a");
    assert.deepEqual(role.rules, [
      { verbs: ["get", "list"], apiGroups: [""], resources: ["secrets", "configmaps"], resourceNames: ["a"] },
    ]);

    await kubectl.ok([
      "create",
      "rolebinding",
      "reader-binding",
      "-n",
      "team-a",
      "--role=reader",
      "--user=alice",
      "--group=devs",
      "--serviceaccount=team-a:builder",
    ]);
    const binding = await getJson("rolebinding", "reader-binding", "-n", "team-a");
    assert.deepEqual(binding.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" });
    assert.deepEqual(
      binding.subjects.map((s: { kind: string; name: string; namespace?: string }) => [s.kind, s.name, s.namespace]),
      [
        ["User", "alice", undefined],
        ["Group", "devs", undefined],
        ["ServiceAccount", "builder", "team-a"],
      ],
    );
    assert.equal(binding.subjects[0].apiGroup, "rbac.authorization.k8s.io");

    await kubectl.ok(["create", "clusterrole", "healthz", "--verb=get", "--non-resource-url=/healthz"]);
    const clusterRole = await getJson("clusterrole", "healthz");
    assert.deepEqual(clusterRole.rules, [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }]);

    await kubectl.ok(["create", "clusterrole", "aggregated", "--aggregation-rule=example.com/aggregate=true"]);
    const aggregated = await getJson("clusterrole", "aggregated");
    assert.deepEqual(aggregated.aggregationRule, {
      clusterRoleSelectors: [{ matchLabels: { "example.com/aggregate": "true" } }],
    });

    await kubectl.ok(["create", "clusterrolebinding", "healthz-binding", "--clusterrole=healthz", "--user=bob"]);
    const clusterBinding = await getJson("clusterrolebinding", "healthz-binding");
    assert.deepEqual(clusterBinding.roleRef, {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "healthz",
    });
    assert.deepEqual(clusterBinding.subjects, [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "bob" }]);
  });

  it("kubectl auth reconcile creates, then updates (PUT of the stored object) RBAC objects", async () => {
    const file = join(dataDir, "rbac.yaml");
    const manifest = (verbs: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reconciled}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [${verbs}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reconciled, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reconciled}
subjects:
- {kind: User, name: carol, apiGroup: rbac.authorization.k8s.io}
`;
    await writeFile(file, manifest("get"));
    await kubectl.ok(["auth", "reconcile", "-f", file]);
    const created = await getJson("clusterrole", "reconciled");
    await writeFile(file, manifest("get, list"));
    const result = await kubectl.run(["auth", "reconcile", "-f", file, "-v=8"]);
    assert.equal(result.code, 0, result.stderr);
    // kubectl logs the request headers in random (Go map) order: Content-Type is one of the five lines that follow.
    assert.match(
      result.stderr,
      /PUT https:\S+\/clusterroles\/reconciled(\n.*){1,5}Content-Type: application\/vnd\.kubernetes\.protobuf/,
    );
    const updated = await getJson("clusterrole", "reconciled");
    assert.equal(updated.metadata.uid, created.metadata.uid);
    assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.deepEqual(updated.rules, [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
      { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] },
    ]);
    const binding = await getJson("rolebinding", "reconciled", "-n", "team-a");
    assert.deepEqual(binding.subjects, [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "carol" }]);
  });

  it("kubectl create --dry-run=server answers the object without storing it", async () => {
    const out = await kubectl.ok([
      "create",
      "configmap",
      "dry",
      "-n",
      "team-a",
      "--from-literal=a=b",
      "--dry-run=server",
      "-o",
      "json",
    ]);
    assert.deepEqual(JSON.parse(out).data, { a: "b" });
    const missing = await kubectl.run(["get", "configmap", "dry", "-n", "team-a"]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /NotFound/);
  });

  it("kubectl label and annotate (merge patches) change what kubectl created", async () => {
    await kubectl.ok(["label", "configmap", "settings", "-n", "team-a", "tier=backend"]);
    await kubectl.ok(["annotate", "secret", "creds", "-n", "team-a", "owner=alice"]);
    await kubectl.ok(["label", "namespace", "team-a", "env=dev"]);
    await kubectl.ok(["label", "service", "web", "-n", "team-a", "app-"]);
    assert.deepEqual((await getJson("configmap", "settings", "-n", "team-a")).metadata.labels, { tier: "backend" });
    assert.deepEqual((await getJson("secret", "creds", "-n", "team-a")).metadata.annotations, { owner: "alice" });
    assert.equal((await getJson("namespace", "team-a")).metadata.labels.env, "dev");
    assert.equal((await getJson("service", "web", "-n", "team-a")).metadata.labels?.app, undefined);
  });

  it("kubectl delete removes what kubectl created", async () => {
    assert.match(await kubectl.ok(["delete", "configmap", "settings", "-n", "team-a"]), /configmap "settings" deleted/);
    await kubectl.ok(["delete", "role", "reader", "-n", "team-a"]);
    await kubectl.ok(["delete", "clusterrolebinding", "healthz-binding"]);
    for (const args of [
      ["configmap", "settings", "-n", "team-a"],
      ["role", "reader", "-n", "team-a"],
      ["clusterrolebinding", "healthz-binding"],
    ]) {
      const result = await kubectl.run(["get", ...args]);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /NotFound/);
    }
  });

  it("a protobuf DeleteOptions body (as typed clients send) is honoured: preconditions are checked", async () => {
    const clusterRole = await getJson("clusterrole", "aggregated");
    const options = (uid: string) =>
      envelope(
        "rbac.authorization.k8s.io/v1",
        "DeleteOptions",
        new WireWriter().bytes(2, new WireWriter().string(1, uid).finish()).string(4, "Background").finish(),
      );
    const conflict = await send(
      "DELETE",
      "/apis/rbac.authorization.k8s.io/v1/clusterroles/aggregated",
      options("nope"),
    );
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json.reason, "Conflict");
    const removed = await send(
      "DELETE",
      "/apis/rbac.authorization.k8s.io/v1/clusterroles/aggregated",
      options(clusterRole.metadata.uid),
    );
    assert.equal(removed.status, 200);
    assert.equal(removed.contentType, "application/json");
    assert.equal(removed.json.status, "Success");
  });

  it("protobuf bodies: JSON answers, Strict unknown fields and malformed bytes are 400, not stored", async () => {
    const configMap = (name: string, extra: (meta: WireWriter) => void = () => {}) => {
      const meta = new WireWriter().string(1, name);
      extra(meta);
      const raw = new WireWriter()
        .bytes(1, meta.finish())
        .bytes(2, new WireWriter().string(1, "k").string(2, "v").finish());
      return envelope("v1", "ConfigMap", raw.finish());
    };
    const path = "/api/v1/namespaces/team-a/configmaps";
    const created = await send("POST", path, configMap("raw"));
    assert.equal(created.status, 201);
    assert.equal(created.contentType, "application/json");
    assert.deepEqual(created.json.data, { k: "v" });

    const strict = await send(
      "POST",
      `${path}?fieldValidation=Strict`,
      configMap("strict", (m) => m.uint(99, 1)),
    );
    assert.equal(strict.status, 400);
    assert.equal(strict.json.kind, "Status");
    assert.match(strict.json.message, /strict decoding error: unknown field number 99 in "metadata"/);

    const truncated = configMap("broken").subarray(0, 20);
    const broken = await send("POST", path, truncated);
    assert.equal(broken.status, 400);
    assert.match(broken.json.message, /^the request body is not valid Kubernetes protobuf: the data ends early/);

    const wrongKind = await send("POST", path, envelope("v1", "Secret", new WireWriter().finish()));
    assert.equal(wrongKind.status, 400);
    assert.match(wrongKind.json.message, /kind in the data \(Secret\) does not match the expected kind \(ConfigMap\)/);

    for (const name of ["strict", "broken"]) {
      const result = await kubectl.run(["get", "configmap", name, "-n", "team-a"]);
      assert.notEqual(result.code, 0);
    }
  });

  it("kubectl delete namespace empties and removes the namespace kubectl created", async () => {
    await kubectl.ok(["delete", "namespace", "team-a", "--wait=false"]);
    await eventually(
      async () => (await kubectl.run(["get", "namespace", "team-a"])).code !== 0,
      "team-a to be removed",
    );
  });
});
