// The virtual cluster runtime end to end on one machine, every piece a real process over HTTPS: the platform, a
// stand-alone host API server, and virtual clusters (`virtualcluster run`) connecting with shared, dedicated,
// rotated, role-less and LICENSE keys; kubectl inside the virtual cluster and on the host; platform kubeconfigs (token
// and client certificate) and a direct cluster endpoint token used against the virtual cluster.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DEFAULT_CACHE_MS } from "../src/virtualcluster/connect/platform-user-authenticator.ts";
import { AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { createAccessKey, readInstance, VIRTUALCLUSTER_SCOPE } from "./support/platform-objects.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";
import { waitFor } from "./support/wait-for.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";

const settings = (platform: string, patches = "") =>
  `external:\n  platform: ${platform}\nsync:\n  toHost:\n    endpoints:\n      patches:\n${patches}`;

const endpointPatches = [
  '        - path: metadata.annotations["team"]',
  "          expression: '\"platform-\" + context.vcluster.name'",
  '        - path: metadata.annotations["owner"]',
  "          expression: 'value'",
  "          reverseExpression: 'value'",
  "",
].join("\n");

const serviceAndEndpoints = (name: string, ip: string) => `
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default, labels: {app: ${name}}}
spec:
  ports: [{name: db, port: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ${name}, namespace: default, labels: {app: ${name}}, annotations: {owner: dba, team: ""}}
subsets:
- addresses: [{ip: ${ip}}]
  ports: [{name: db, port: 5432}]
`;

describe("virtual cluster runtime", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let hostctl: Kubectl;
  let client: AuthClient;
  const runtimes: RuntimeProcess[] = [];

  const createKey = (name: string, scope?: unknown) => createAccessKey(client, platform, name, scope);
  const vcKey = (name: string) => createKey(name, VIRTUALCLUSTER_SCOPE);

  const apiKeySecret = (namespace: string, name: string, key: string) =>
    hostctl.ok(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace },
        stringData: { accessKey: key, host: new URL(platform.url).host, certificateAuthorityData: platform.caPem },
      }),
    );
  const namespace = (name: string) =>
    hostctl.ok(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } }));
  const run = async (options: Parameters<typeof startRuntimeProcess>[0]) => {
    const runtime = await startRuntimeProcess(options);
    runtimes.push(runtime);
    return runtime;
  };
  const instance = (name: string) => readInstance(client, platform, name);

  before(async () => {
    [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
    hostctl = new Kubectl(host.kubeconfig);
    client = new AuthClient(platform.url, platform.caPem);
  });

  after(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.stop()));
    await Promise.all([platform?.stop(), host?.stop()]);
  });

  describe("dedicated key", () => {
    let vc: RuntimeProcess;
    let vcctl: Kubectl;

    before(async () => {
      await namespace("team-a");
      await apiKeySecret("team-a", "virtualcluster-platform-api-key", await vcKey("dev-key"));
      vc = await run({
        name: "dev",
        namespace: "team-a",
        settings: settings("{}", endpointPatches),
        hostKubeconfig: host.kubeconfig,
      });
      vcctl = new Kubectl(vc.kubeconfig);
      await waitFor(async () => (await vc.status()).platform?.connected === true, "the platform connection");
    });

    it("registers the instance on the platform and reports it online with its serving CA", async () => {
      const registered = await instance("dev");
      assert.equal(registered.spec.external, true);
      assert.equal(registered.spec.clusterRef.namespace, "team-a");
      assert.equal(registered.status.online, true);
      assert.equal(registered.status.phase, "Ready");
      assert.match(registered.status.serverCertificateAuthority, /BEGIN CERTIFICATE/);
      assert.match(registered.status.kubernetesVersion, /^v1\.\d+/);
    });

    it("syncs a selector-less Service and its Endpoints to the host with translated names and patched values", async () => {
      await vcctl.ok(["apply", "-f", "-"], serviceAndEndpoints("db", "10.1.2.3"));
      let endpoints: {
        metadata: { labels: Record<string, string>; annotations: Record<string, string> };
        subsets: { addresses: { ip: string }[] }[];
      } = JSON.parse("{}");
      await waitFor(async () => {
        const got = await hostctl.run(["-n", "team-a", "get", "endpoints", "db-x-default-x-dev", "-o", "json"]);
        if (got.code !== 0) return false;
        endpoints = JSON.parse(got.stdout);
        return true;
      }, "the host Endpoints");
      assert.equal(endpoints.metadata.annotations.team, "platform-dev", "expression patch applied");
      assert.equal(endpoints.metadata.annotations["virtualcluster.platform.sh/object-name"], "db");
      assert.equal(endpoints.metadata.labels["virtualcluster.platform.sh/managed-by"], "dev");
      assert.equal(endpoints.metadata.labels.app, "db");
      assert.equal(endpoints.subsets[0].addresses[0].ip, "10.1.2.3");
      await hostctl.ok(["-n", "team-a", "get", "service", "db-x-default-x-dev"]);

      await vcctl.ok(["apply", "-f", "-"], serviceAndEndpoints("db", "10.9.9.9"));
      await waitFor(async () => {
        const ip = await hostctl.ok([
          "-n",
          "team-a",
          "get",
          "endpoints",
          "db-x-default-x-dev",
          "-o",
          "jsonpath={.subsets[0].addresses[0].ip}",
        ]);
        return ip === "10.9.9.9";
      }, "the update to reach the host");
    });

    it("brings a host-side annotation change back through reverseExpression", async () => {
      await hostctl.ok(["-n", "team-a", "annotate", "--overwrite", "endpoints", "db-x-default-x-dev", "owner=sre"]);
      await waitFor(async () => {
        const owner = await vcctl.ok(["get", "endpoints", "db", "-o", "jsonpath={.metadata.annotations.owner}"]);
        return owner === "sre";
      }, "the annotation to come back");
    });

    it("makes no writes while idle", async () => {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const before = (await vc.status()).syncer.totalWrites;
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const later = await vc.status();
      assert.equal(later.syncer.totalWrites, before, "ten idle seconds cause zero writes");
    });

    it("lets platform kubeconfigs (token and client certificate) and a direct cluster endpoint token in", async () => {
      for (const spec of [{}, { clientCert: true }]) {
        const reply = await client.send("POST", `${API}/namespaces/p-default/virtualclusterinstances/dev/kubeconfig`, {
          token: platform.adminKey,
          body: { apiVersion: "management.platform.sh/v1", kind: "VirtualClusterInstanceKubeConfig", spec },
        });
        assert.equal(reply.status, 201, reply.body);
        const file = join(vc.dataDir, `user-${Object.keys(spec).length}.kubeconfig`);
        await writeFile(file, reply.json().status.kubeConfig, { mode: 0o600 });
        const names = await new Kubectl(file).ok(["get", "services", "-n", "default", "-o", "name"]);
        assert.match(names, /service\/db/, `kubeconfig ${JSON.stringify(spec)} works`);
      }
      const token = await client.send("POST", `${API}/directclusterendpointtokens`, {
        token: platform.adminKey,
        body: { apiVersion: "management.platform.sh/v1", kind: "DirectClusterEndpointToken", spec: { ttl: 600 } },
      });
      assert.equal(token.status, 201, token.body);
      const direct = await vcctl.ok(["--token", token.json().status.token, "get", "namespaces", "-o", "name"]);
      assert.match(direct, /namespace\/default/);
      const bogus = await vcctl.run(["--token", "not-a-platform-key", "get", "namespaces"]);
      assert.notEqual(bogus.code, 0);
    });

    it("stops letting in a platform key disabled on the platform within the stated bound", async () => {
      const key = await createKey("alice-vc");
      assert.match(await vcctl.ok(["--token", key, "get", "namespaces", "-o", "name"]), /namespace\/default/);
      const disabled = await client.send("PATCH", `${API}/ownedaccesskeys/alice-vc`, {
        token: platform.adminKey,
        body: { spec: { disabled: true } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(disabled.status, 200, disabled.body);
      // The virtual cluster trusts a reviewed key for at most DEFAULT_CACHE_MS; past it, the next request asks again.
      await new Promise((resolve) => setTimeout(resolve, DEFAULT_CACHE_MS + 500));
      const refused = await vcctl.run(["--token", key, "get", "namespaces"]);
      assert.notEqual(refused.code, 0, "a disabled key still got in");
    });

    it("stops letting in a direct cluster endpoint token once its user's tokenGeneration is raised", async () => {
      await client.createUser(platform.adminKey, "tess", { clusterRoles: [{ name: "admin" }] });
      const key = await client.createKey(platform.adminKey, "tess-key", { user: "tess" });
      const issued = await client.send("POST", `${API}/directclusterendpointtokens`, {
        token: key,
        body: { apiVersion: "management.platform.sh/v1", kind: "DirectClusterEndpointToken", spec: { ttl: 600 } },
      });
      assert.equal(issued.status, 201, issued.body);
      const token = issued.json().status.token;
      assert.match(await vcctl.ok(["--token", token, "get", "namespaces", "-o", "name"]), /namespace\/default/);
      const raised = await client.send("PATCH", `${API}/users/tess`, {
        token: platform.adminKey,
        body: { spec: { tokenGeneration: 1 } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(raised.status, 200, raised.body);
      // Verified offline, the token is still valid for ten minutes; the platform's review refuses it within
      // DEFAULT_CACHE_MS.
      await waitFor(
        async () => (await vcctl.run(["--token", token, "get", "namespaces"])).code !== 0,
        "the revoked token to be refused",
      );
    });

    it("picks up a rotated key from the Secret without a restart", async () => {
      await apiKeySecret("team-a", "virtualcluster-platform-api-key", await vcKey("dev-key-2"));
      const deleted = await client.send("DELETE", `${API}/ownedaccesskeys/dev-key`, { token: platform.adminKey });
      assert.equal(deleted.status, 200, deleted.body);
      const since = Date.now();
      await waitFor(async () => {
        const status = (await vc.status()).platform;
        return status?.connected === true && Date.parse(status.lastHeartbeat ?? "") > since;
      }, "a heartbeat with the new key");
    });
  });

  describe("shared key", () => {
    it("serves two virtual clusters in different namespaces and creates the Secret-reader RBAC", async () => {
      await Promise.all(["virtualcluster-platform", "team-b", "team-c"].map(namespace));
      await apiKeySecret("virtualcluster-platform", "shared-key", await vcKey("shared"));
      const shared = settings(
        "\n    apiKey:\n      secretName: shared-key\n      namespace: virtualcluster-platform\n",
      );
      const [b, c] = await Promise.all([
        run({ name: "vc-b", namespace: "team-b", settings: shared, hostKubeconfig: host.kubeconfig }),
        run({ name: "vc-c", namespace: "team-c", settings: shared, hostKubeconfig: host.kubeconfig }),
      ]);
      for (const vc of [b, c]) {
        await waitFor(async () => (await vc.status()).platform?.connected === true, "both connections");
      }
      assert.equal((await instance("vc-b")).status.online, true);
      assert.equal((await instance("vc-c")).status.online, true);
      const role = JSON.parse(
        await hostctl.ok([
          "-n",
          "virtualcluster-platform",
          "get",
          "role",
          "vc-vc-b-v-team-b-platform-role",
          "-o",
          "json",
        ]),
      );
      assert.deepEqual(role.rules[0].resourceNames, ["shared-key"]);
      await hostctl.ok([
        "-n",
        "virtualcluster-platform",
        "get",
        "rolebinding",
        "vc-vc-c-v-team-c-platform-role-binding",
      ]);
    });
  });

  describe("keys that cannot connect", () => {
    it("reports a clear connection error for a key without the role, and keeps serving", async () => {
      await namespace("team-d");
      await apiKeySecret("team-d", "virtualcluster-platform-api-key", await createKey("no-role"));
      const vc = await run({
        name: "vc-d",
        namespace: "team-d",
        settings: settings("{}"),
        hostKubeconfig: host.kubeconfig,
      });
      await waitFor(
        async () => /lacks the role "virtualcluster"/.test((await vc.status()).platform?.error ?? ""),
        "the error",
      );
      assert.match(vc.stderr(), /lacks the role/);
      await new Kubectl(vc.kubeconfig).ok(["get", "namespaces"]);
    });

    it("prefers LICENSE over the Secrets", async () => {
      await namespace("team-e");
      await apiKeySecret("team-e", "virtualcluster-platform-api-key", await vcKey("e-secret"));
      const vc = await run({
        name: "vc-e",
        namespace: "team-e",
        settings: settings("{}"),
        hostKubeconfig: host.kubeconfig,
        env: { LICENSE: await createKey("e-license-no-role") },
      });
      await waitFor(
        async () => /LICENSE/.test((await vc.status()).platform?.error ?? ""),
        "the LICENSE key to be used",
      );
      assert.match((await vc.status()).platform?.error ?? "", /lacks the role/);
    });
  });
});
