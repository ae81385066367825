// Connected clusters end to end, every part a real process over HTTPS: the platform, two stand-alone host API
// servers ("a" and "b") connected with `virtualcluster cluster connect`, and their agents (`virtualcluster agent`).
// Registration and heartbeats, kubectl through the platform with the user's identity (the host's RBAC decides),
// keys and tokens scoped to one cluster, the direct endpoint with the platform stopped, offline after kill -9 and
// online again, a space with its RoleBindings, and a virtual cluster the platform places on a cluster.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type AgentProcess, startAgentProcess } from "./support/agent-process.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { assertCliFailure, runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("connected clusters", { skip: kubectlSkip }, () => {
  let root: string;
  let platformDir: string;
  let platformPort: number;
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  const hosts: Record<string, ClusterApiServerProcess> = {};
  const agents: Record<string, AgentProcess> = {};
  const agentDirs: Record<string, string> = {};
  let adminEnv: NodeJS.ProcessEnv;
  let devKey: string;
  let devEnv: NodeJS.ProcessEnv;

  const startPlatform = async () => {
    platform = await startPlatformProcess({
      dataDir: platformDir,
      extraArgs: ["--port", String(platformPort), "--cluster-heartbeat-seconds", "1"],
    });
    client = new AuthClient(platform.url, platform.caPem);
  };
  const cluster = async (name: string) =>
    (await client.send("GET", `${MGMT}/clusters/${name}`, { token: admin })).json();
  const hostKubectl = (name: string) => new Kubectl(hosts[name].kubeconfig);
  const cli = (env: NodeJS.ProcessEnv, args: string[]) => runCli(args, { env });
  const loginEnv = async (name: string, key: string) => {
    const env = { ...process.env, VIRTUALCLUSTER_HOME: join(root, `home-${name}`) };
    const caFile = join(root, "platform-ca.pem");
    await writeFile(caFile, platform.caPem);
    const login = await cli(env, ["platform", "login", platform.url, "--ca-file", caFile, "--access-key", key]);
    assert.equal(login.code, 0, login.stderr);
    return env;
  };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "connected-clusters-"));
    platformDir = join(root, "platform");
    platformPort = await freePort();
    await startPlatform();
    admin = platform.adminKey;
    [hosts.a, hosts.b] = await Promise.all([startClusterApiServerProcess(), startClusterApiServerProcess()]);
    adminEnv = await loginEnv("admin", admin);
    for (const name of ["a", "b"]) {
      agentDirs[name] = join(root, `agent-${name}`);
      const connected = await cli(adminEnv, [
        "cluster",
        "connect",
        name,
        "--host-kubeconfig",
        hosts[name].kubeconfig,
        "--data-dir",
        agentDirs[name],
        "--direct-host",
        "127.0.0.1",
        "--direct-port",
        "0",
        "--no-start",
      ]);
      assert.equal(connected.code, 0, connected.stderr);
      agents[name] = await startAgentProcess(agentDirs[name]);
    }
    // dev may use both clusters; outsider neither.
    await client.createUser(admin, "dev");
    await client.createUser(admin, "outsider");
    for (const name of ["a", "b"]) {
      const granted = await client.send("PATCH", `${MGMT}/clusters/${name}`, {
        token: admin,
        body: { spec: { access: [{ verbs: ["use"], users: ["dev"] }] } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(granted.status, 200, granted.body);
    }
    devKey = await client.createKey(admin, "dev-key", { user: "dev" });
    devEnv = await loginEnv("dev", devKey);
    // Host a's RBAC lets platform user dev edit in team-a, nothing in other.
    const host = hostKubectl("a");
    await host.ok(["create", "namespace", "team-a"]);
    await host.ok(["create", "namespace", "other"]);
    await host.ok([
      "create",
      "rolebinding",
      "dev-edit",
      "-n",
      "team-a",
      "--clusterrole=edit",
      "--user=platform:user:dev",
    ]);
  });

  after(async () => {
    await Promise.all(Object.values(agents).map((agent) => agent.stop()));
    client?.close();
    await platform?.stop();
    await Promise.all(Object.values(hosts).map((host) => host.stop()));
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("each agent registers its cluster, which turns online with the host's version and heartbeats", async () => {
    for (const name of ["a", "b"]) {
      await waitFor(async () => (await cluster(name)).status?.online === true, `cluster ${name} online`);
      const status = (await cluster(name)).status;
      assert.equal(status.phase, "Ready");
      assert.match(status.kubernetesVersion, /^v1\.\d+/);
      assert.match(status.directEndpoint.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const first = status.lastHeartbeatTime;
      await waitFor(
        async () => (await cluster(name)).status?.lastHeartbeatTime > first,
        `a later heartbeat of ${name}`,
      );
    }
    const table = await new Kubectl(platform.kubeconfig).ok(["get", "clusters"]);
    assert.match(table, /NAME\s+DISPLAY NAME\s+PHASE\s+ONLINE\s+VERSION/);
    assert.match(table, /\na\s+Ready\s+true\s+v1\./);
    const listed = await cli(adminEnv, ["platform", "get", "clusters"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^b\s/m);
  });

  it("each agent's usage reaches the platform's /metrics, labelled with its cluster (cost control)", async () => {
    await waitFor(async () => (await cluster("a")).status?.usage?.residentMemoryBytes > 0, "the agent's usage");
    const usage = (await cluster("a")).status.usage;
    assert.ok(usage.cpuSeconds > 0, JSON.stringify(usage));
    const metrics = (await client.send("GET", "/metrics", { token: admin, accept: "text/plain" })).body;
    assert.match(
      metrics,
      /vcp_usage_resident_memory_bytes\{project="",cluster="a",virtualcluster="",component="agent"\} [1-9]\d*/,
    );
  });

  it("agent and cluster connect say what is wrong in one line", async () => {
    assertCliFailure(
      await cli(adminEnv, ["agent", "--data-dir", join(root, "nowhere")]),
      /agent\.json does not exist: connect the cluster first \(virtualcluster cluster connect NAME/,
    );
    assertCliFailure(
      await cli(adminEnv, ["cluster", "connect", "Bad_Name", "--host-kubeconfig", hosts.a.kubeconfig]),
      /cluster name "Bad_Name" must be a DNS label/,
    );
    assertCliFailure(
      await cli(adminEnv, ["cluster", "connect", "c", "--host-kubeconfig", join(root, "missing.kubeconfig")]),
      /--host-kubeconfig .*missing\.kubeconfig: no such file/,
    );
  });

  it("the agent's key opens only its own cluster's tunnel, and nothing else on the platform", async () => {
    const key = (await readFile(join(agentDirs.a, "access-key"), "utf8")).trim();
    const users = await client.send("GET", `${MGMT}/users`, { token: key });
    assert.equal(users.status, 403, users.body);
    const proxied = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces", { token: key });
    assert.equal(proxied.status, 403, proxied.body);
  });

  it("kubectl through the platform acts as the platform user: the host's RBAC allows team-a and refuses other", async () => {
    const kubeconfig = join(root, "dev.kubeconfig");
    const connected = await cli(devEnv, ["connect", "cluster", "a", "--kubeconfig", kubeconfig]);
    assert.equal(connected.code, 0, connected.stderr);
    assert.match(
      connected.stdout,
      /Switched to context .* \(cluster a, through the platform, https:\/\/.*\/kubernetes\/cluster\/a\)/,
    );
    const kubectl = new Kubectl(kubeconfig);
    const watch = kubectl.start(["get", "configmaps", "-n", "team-a", "-w", "-o", "name"]);
    try {
      await kubectl.ok(["create", "configmap", "through-platform", "-n", "team-a", "--from-literal=k=v"]);
      await waitFor(
        async () => watch.output().includes("configmap/through-platform"),
        "the watch sees the new ConfigMap",
      );
    } finally {
      watch.child.kill();
    }
    assert.match(
      await kubectl.ok(["get", "configmap", "through-platform", "-n", "team-a", "-o", "jsonpath={.data.k}"]),
      /^v$/,
    );
    const refused = await kubectl.run(["get", "configmaps", "-n", "other"]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /User "platform:user:dev" cannot list resource "configmaps".* in the namespace "other"/,
    );
    // The client cannot say who it is: the platform does.
    const impersonating = await kubectl.run(["get", "configmaps", "-n", "other", "--as", "system:admin"]);
    assert.notEqual(impersonating.code, 0);
    assert.match(impersonating.stderr, /impersonate-user is not accepted through the platform/i);
  });

  it("a body sent in chunks (no Content-Length) reaches the host whole through the platform", async () => {
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "chunked" },
      data: { k: "v".repeat(5000) },
    };
    const text = JSON.stringify(configMap);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL("/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", platform.url);
      const request = httpsRequest(url, {
        method: "POST",
        ca: platform.caPem,
        headers: { authorization: `Bearer ${devKey}`, "content-type": "application/json" },
      });
      request.once("response", (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.once("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.once("error", reject);
      // Two writes and no length: Node sends Transfer-Encoding: chunked.
      request.write(text.slice(0, 100));
      request.end(text.slice(100));
    });
    assert.equal(answer.status, 201, answer.body);
    assert.equal(
      (await hostKubectl("a").ok(["get", "configmap", "chunked", "-n", "team-a", "-o", "jsonpath={.data.k}"])).length,
      5000,
    );
  });

  it("a watch through the platform ends once its key is deleted, or its user may no longer use the cluster", async () => {
    /** A watch of team-a's ConfigMaps through the platform; resolves once the host answered its head. */
    const relayedWatch = (token: string) =>
      new Promise<{ closed: () => boolean; destroy: () => void }>((resolve, reject) => {
        const url = new URL(
          "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps?watch=1&timeoutSeconds=86400",
          platform.url,
        );
        const request = httpsRequest(url, { ca: platform.caPem, headers: { authorization: `Bearer ${token}` } });
        request.once("response", (response) => {
          if (response.statusCode !== 200) reject(new Error(`watch: ${response.statusCode}`));
          let closed = false;
          response.resume();
          response.once("close", () => {
            closed = true;
          });
          resolve({ closed: () => closed, destroy: () => request.destroy() });
        });
        request.on("error", () => {});
        request.end();
      });
    const setAccess = (users: string[]) =>
      client.send("PATCH", `${MGMT}/clusters/a`, {
        token: admin,
        body: { spec: { access: [{ verbs: ["use"], users }] } },
        contentType: "application/merge-patch+json",
      });
    await client.createUser(admin, "watcher");
    const watcherKey = await client.createKey(admin, "watcher-key", { user: "watcher" });
    await hostKubectl("a").ok([
      "create",
      "rolebinding",
      "watcher-view",
      "-n",
      "team-a",
      "--clusterrole=view",
      "--user=platform:user:watcher",
    ]);
    assert.equal((await setAccess(["dev", "watcher"])).status, 200);
    const second = await client.createKey(admin, "dev-key-2", { user: "dev" });
    const byKey = await relayedWatch(second);
    const byWatcher = await relayedWatch(watcherKey);
    const byDev = await relayedWatch(devKey);
    try {
      assert.equal((await client.send("DELETE", `${MGMT}/ownedaccesskeys/dev-key-2`, { token: admin })).status, 200);
      await waitFor(async () => byKey.closed(), "the deleted key's relayed watch to end");
      assert.equal((await setAccess(["dev"])).status, 200);
      await waitFor(async () => byWatcher.closed(), "the relayed watch of a user who may no longer use a to end");
      // dev's key and rights did not change: its watch goes on.
      assert.equal(byDev.closed(), false);
      const refused = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", {
        token: watcherKey,
      });
      assert.equal(refused.status, 403, refused.body);
    } finally {
      for (const watch of [byKey, byWatcher, byDev]) watch.destroy();
      await setAccess(["dev"]);
    }
  });

  it("a user the Cluster does not let use it is refused by the platform, before the host", async () => {
    const outsider = await client.createKey(admin, "outsider-key", { user: "outsider" });
    const reply = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", {
      token: outsider,
    });
    assert.equal(reply.status, 403, reply.body);
    assert.match(
      reply.json().message,
      /clusters\.management\.platform\.sh "a" is forbidden: User "outsider" cannot use the cluster/,
    );
    const unknown = await client.send("GET", "/kubernetes/cluster/nope/api/v1/namespaces", { token: admin });
    assert.equal(unknown.status, 404, unknown.body);
  });

  it("a project owner who may not use a cluster cannot place an instance on it, at create or by an update", async () => {
    const project = await client.send("POST", `${MGMT}/projects`, {
      token: admin,
      body: { apiVersion: V1, kind: "Project", metadata: { name: "outside" }, spec: { owner: { user: "outsider" } } },
    });
    assert.equal(project.status, 201, project.body);
    const outsider = await client.createKey(admin, "outsider-placing", { user: "outsider" });
    const instances = `${MGMT}/namespaces/p-outside/virtualclusterinstances`;
    const make = (name: string, spec: object) =>
      client.send("POST", instances, {
        token: outsider,
        body: { apiVersion: V1, kind: "VirtualClusterInstance", metadata: { name }, spec },
      });
    const change = (name: string, spec: object) =>
      client.send("PATCH", `${instances}/${name}`, {
        token: outsider,
        body: { spec },
        contentType: "application/merge-patch+json",
      });
    const placed = await make("placed", { clusterRef: { cluster: "a" } });
    assert.equal(placed.status, 403, placed.body);
    // Created unplaced, then pointed at the cluster; or registered as external there, then made the platform's.
    assert.equal((await make("plain", {})).status, 201);
    const moved = await change("plain", { clusterRef: { cluster: "a", namespace: "chosen" } });
    assert.equal(moved.status, 422, moved.body);
    assert.match(moved.json().message, /only when it is created so/);
    assert.equal((await make("registered", { external: true, clusterRef: { cluster: "a" } })).status, 201);
    const flipped = await change("registered", { external: false });
    assert.equal(flipped.status, 422, flipped.body);
    const stored = await client.send("GET", `${instances}/registered`, { token: admin });
    assert.equal(stored.json().spec.external, true, "nothing changed");
    for (const name of ["plain", "registered"]) {
      assert.equal((await client.send("DELETE", `${instances}/${name}`, { token: admin })).status, 200);
    }
  });

  it("a key scoped to cluster a reaches a and is refused on b", async () => {
    const scoped = await client.createKey(devKey, "dev-a-only", { scope: { clusters: [{ cluster: "a" }] } });
    const onA = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", {
      token: scoped,
    });
    assert.equal(onA.status, 200, onA.body);
    const onB = await client.send("GET", "/kubernetes/cluster/b/api/v1/namespaces/default/configmaps", {
      token: scoped,
    });
    assert.equal(onB.status, 403, onB.body);
    assert.match(onB.json().message, /the access key's scope does not allow it/);
  });

  it("the platform issues direct endpoint tokens only for clusters the user may use", async () => {
    const refused = await client.send("POST", `${MGMT}/directclusterendpointtokens`, {
      token: await client.createKey(admin, "outsider-key-2", { user: "outsider" }),
      body: { apiVersion: V1, kind: "DirectClusterEndpointToken", spec: { scope: { clusters: [{ cluster: "a" }] } } },
    });
    assert.equal(refused.status, 403, refused.body);
    assert.match(refused.json().message, /cannot use cluster "a"/);
    // Nor for the spaces of every project, which only a caller who may list them all sees.
    const everySpace = (token: string) =>
      client.send("POST", `${MGMT}/directclusterendpointtokens`, {
        token,
        body: {
          apiVersion: V1,
          kind: "DirectClusterEndpointToken",
          spec: { scope: { spaces: [{ project: "*", space: "*" }] } },
        },
      });
    const wide = await everySpace(devKey);
    assert.equal(wide.status, 403, wide.body);
    assert.match(wide.json().message, /cannot see the spaces of every project/);
    assert.equal((await everySpace(admin)).status, 201);
  });

  it("a space is a namespace on the cluster with RoleBindings for the project's members, removed with the space", async () => {
    await client.createUser(admin, "member");
    const project = await client.send("POST", `${MGMT}/projects`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "Project",
        metadata: { name: "alpha" },
        spec: { members: [{ name: "member", clusterRole: "edit" }] },
      },
    });
    assert.equal(project.status, 201, project.body);
    const created = await client.send("POST", `${MGMT}/namespaces/p-alpha/spaceinstances`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "SpaceInstance",
        metadata: { name: "alpha-dev" },
        spec: { clusterRef: { cluster: "a" } },
      },
    });
    assert.equal(created.status, 201, created.body);
    const space = () => client.send("GET", `${MGMT}/namespaces/p-alpha/spaceinstances/alpha-dev`, { token: admin });
    await waitFor(async () => (await space()).json().status?.phase === "Ready", "the space is Ready");
    const host = hostKubectl("a");
    const binding = JSON.parse(await host.ok(["get", "rolebinding", "platform-edit", "-n", "alpha-dev", "-o", "json"]));
    assert.equal(binding.roleRef.name, "edit");
    assert.deepEqual(
      binding.subjects.map((s: { kind: string; name: string }) => `${s.kind}/${s.name}`),
      ["User/platform:user:member"],
    );
    // A member reaches the space's namespace through the platform without any right on the cluster itself.
    const memberKey = await client.createKey(admin, "member-key", { user: "member" });
    const inSpace = await client.send("POST", "/kubernetes/cluster/a/api/v1/namespaces/alpha-dev/configmaps", {
      token: memberKey,
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "from-member" } },
    });
    assert.equal(inSpace.status, 201, inSpace.body);
    const outside = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", {
      token: memberKey,
    });
    assert.equal(outside.status, 403, outside.body);
    // A key of dev's scoped to the space reaches only its namespace, though dev may use the whole cluster.
    await client.send("PATCH", `${MGMT}/projects/alpha`, {
      token: admin,
      body: {
        spec: {
          members: [
            { name: "member", clusterRole: "edit" },
            { name: "dev", clusterRole: "view" },
          ],
        },
      },
      contentType: "application/merge-patch+json",
    });
    const spaceOnly = { spaces: [{ project: "alpha", space: "alpha-dev" }] };
    const spaceKey = await client.createKey(devKey, "dev-space-only", { scope: spaceOnly });
    // The project's new member gets the space's view RoleBinding from the agent shortly.
    await waitFor(
      async () =>
        (await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/alpha-dev/configmaps", { token: spaceKey }))
          .status === 200,
      "dev's key scoped to the space reaches it",
    );
    const elsewhere = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", {
      token: spaceKey,
    });
    assert.equal(elsewhere.status, 403, elsewhere.body);
    // The same at the direct endpoint, with a token scoped to the space.
    const issued = await client.send("POST", `${MGMT}/directclusterendpointtokens`, {
      token: devKey,
      body: { apiVersion: V1, kind: "DirectClusterEndpointToken", spec: { ttl: 600, scope: spaceOnly } },
    });
    assert.equal(issued.status, 201, issued.body);
    const endpoint = (await cluster("a")).status.directEndpoint;
    const direct = new AuthClient(endpoint.url, endpoint.certificateAuthority);
    try {
      const token = issued.json().status.token;
      const inside = await direct.send("GET", "/api/v1/namespaces/alpha-dev/configmaps", { token });
      assert.equal(inside.status, 200, inside.body);
      const outsideDirect = await direct.send("GET", "/api/v1/namespaces/team-a/configmaps", { token });
      assert.equal(outsideDirect.status, 403, outsideDirect.body);
      assert.match(outsideDirect.json().message, /reaches only the namespaces of its spaces/);
    } finally {
      direct.close();
    }
    await waitFor(
      async () => (await cluster("a")).status?.spaces?.includes("alpha/alpha-dev"),
      "the cluster lists the space",
    );

    const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-alpha/spaceinstances/alpha-dev`, {
      token: admin,
    });
    assert.equal(deleted.status, 200, deleted.body);
    await waitFor(async () => (await space()).status === 404, "the space is gone once the host confirmed");
    const gone = await host.run(["get", "namespace", "alpha-dev"]);
    assert.notEqual(gone.code, 0, "the namespace was deleted on the host");
    assert.match(gone.stderr, /not found/);
  });

  it("a space never takes over a namespace it did not create", async () => {
    const created = await client.send("POST", `${MGMT}/namespaces/p-alpha/spaceinstances`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "SpaceInstance",
        metadata: { name: "grab" },
        spec: { clusterRef: { cluster: "a", namespace: "team-a" } },
      },
    });
    assert.equal(created.status, 201, created.body);
    const space = () => client.send("GET", `${MGMT}/namespaces/p-alpha/spaceinstances/grab`, { token: admin });
    await waitFor(async () => (await space()).json().status?.phase === "Failed", "the space fails");
    assert.match(
      (await space()).json().status.message,
      /namespace "team-a" already exists on the cluster and belongs to something else/,
    );
    await client.send("DELETE", `${MGMT}/namespaces/p-alpha/spaceinstances/grab`, { token: admin });
    await waitFor(async () => (await space()).status === 404, "the failed space goes");
    assert.equal((await hostKubectl("a").run(["get", "namespace", "team-a"])).code, 0, "team-a stays");
  });

  it("a virtual cluster placed on a cluster is run by its agent, syncs, and is removed with its instance", async () => {
    const created = await client.send("POST", `${MGMT}/namespaces/p-alpha/virtualclusterinstances`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "VirtualClusterInstance",
        metadata: { name: "vc1" },
        spec: { clusterRef: { cluster: "a" } },
      },
    });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.json().spec.clusterRef.namespace, "p-alpha-v-vc1");
    const instance = () =>
      client.send("GET", `${MGMT}/namespaces/p-alpha/virtualclusterinstances/vc1`, { token: admin });
    await waitFor(async () => (await instance()).json().status?.online === true, "the virtual cluster is online");
    assert.equal((await instance()).json().spec.external, undefined, "still the platform's, not external");
    const kubeconfig = await client.send("POST", `${MGMT}/namespaces/p-alpha/virtualclusterinstances/vc1/kubeconfig`, {
      token: admin,
      body: { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec: {} },
    });
    assert.equal(kubeconfig.status, 201, kubeconfig.body);
    const file = join(root, "vc1.kubeconfig");
    await writeFile(file, kubeconfig.json().status.kubeConfig);
    const virtual = new Kubectl(file);
    await virtual.ok(["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    const host = hostKubectl("a");
    await waitFor(
      async () =>
        (await host.run(["get", "services", "-n", "p-alpha-v-vc1", "-o", "name"])).stdout.includes(
          "web-x-default-x-vc1",
        ),
      "the Service is synced into the host namespace",
    );
    const keys = await client.send(
      "GET",
      `${MGMT}/ownedaccesskeys?labelSelector=management.platform.sh/runtime-of=${created.json().metadata.uid}`,
      {
        token: admin,
      },
    );
    assert.equal(keys.json().items.length, 1, "one dedicated runtime key");

    const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-alpha/virtualclusterinstances/vc1`, {
      token: admin,
    });
    assert.equal(deleted.status, 200, deleted.body);
    await waitFor(async () => (await instance()).status === 404, "the instance is gone once its agent removed it");
    assert.notEqual((await host.run(["get", "namespace", "p-alpha-v-vc1"])).code, 0, "its host namespace is gone");
    const left = await client.send(
      "GET",
      `${MGMT}/ownedaccesskeys?labelSelector=management.platform.sh/runtime-of=${created.json().metadata.uid}`,
      {
        token: admin,
      },
    );
    assert.equal(left.json().items.length, 0, "the runtime key is revoked");
  });

  it("a project being deleted waits for its spaces", async () => {
    const created = await client.send("POST", `${MGMT}/namespaces/p-alpha/spaceinstances`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "SpaceInstance",
        metadata: { name: "last" },
        spec: { clusterRef: { cluster: "a" } },
      },
    });
    assert.equal(created.status, 201, created.body);
    const project = () => client.send("GET", `${MGMT}/projects/alpha`, { token: admin });
    assert.equal((await client.send("DELETE", `${MGMT}/projects/alpha`, { token: admin })).status, 200);
    await waitFor(
      async () =>
        ((await project()).json().status?.conditions ?? []).some((condition: { message?: string }) =>
          /waiting for 1 space in namespace "p-alpha"/.test(condition.message ?? ""),
        ),
      "the project says it waits for the space",
    );
    await client.send("DELETE", `${MGMT}/namespaces/p-alpha/spaceinstances/last`, { token: admin });
    await waitFor(async () => (await project()).status === 404, "the project goes once its space is gone");
  });

  it("offline after the agent is killed with SIGKILL, online again when it restarts", async () => {
    await agents.a.stop("SIGKILL");
    await waitFor(async () => (await cluster("a")).status?.online === false, "cluster a offline");
    assert.equal((await cluster("a")).status.phase, "Offline");
    const unavailable = await client.send("GET", "/kubernetes/cluster/a/version", { token: admin });
    assert.equal(unavailable.status, 503, unavailable.body);
    assert.match(unavailable.json().message, /cluster "a" is not connected: its agent is offline/);
    agents.a = await startAgentProcess(agentDirs.a);
    await waitFor(async () => (await cluster("a")).status?.online === true, "cluster a online again");
    const back = await client.send("GET", "/kubernetes/cluster/a/api/v1/namespaces/team-a/configmaps", {
      token: devKey,
    });
    assert.equal(back.status, 200, back.body);
  });

  it("disabling the agent's key ends its open tunnel: the cluster goes offline", async () => {
    const keys = await client.send("GET", `${MGMT}/ownedaccesskeys?labelSelector=management.platform.sh/cluster=b`, {
      token: admin,
    });
    assert.equal(keys.json().items.length, 1, "one agent key per cluster");
    const name = keys.json().items[0].metadata.name;
    const disabled = await client.send("PATCH", `${MGMT}/ownedaccesskeys/${name}`, {
      token: admin,
      body: { spec: { disabled: true } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(disabled.status, 200, disabled.body);
    await waitFor(async () => (await cluster("b")).status?.online === false, "cluster b offline");
    const reply = await client.send("GET", "/kubernetes/cluster/b/version", { token: admin });
    assert.equal(reply.status, 503, reply.body);
  });

  it("a direct endpoint token works at the agent, within its scope, also while the platform is stopped", async () => {
    const token = async (scope?: object) => {
      const reply = await client.send("POST", `${MGMT}/directclusterendpointtokens`, {
        token: devKey,
        body: { apiVersion: V1, kind: "DirectClusterEndpointToken", spec: { ttl: 600, ...(scope ? { scope } : {}) } },
      });
      assert.equal(reply.status, 201, reply.body);
      return reply.json().status.token as string;
    };
    const forA = await token({ clusters: [{ cluster: "a" }] });
    const unscoped = await token();
    const direct = async (name: string, path: string, bearer: string) => {
      const endpoint = (await cluster(name)).status.directEndpoint;
      const http = new AuthClient(endpoint.url, endpoint.certificateAuthority);
      try {
        return await http.send("GET", path, { token: bearer });
      } finally {
        http.close();
      }
    };
    const endpoints = { a: (await cluster("a")).status.directEndpoint, b: (await cluster("b")).status.directEndpoint };
    assert.equal((await direct("a", "/api/v1/namespaces/team-a/configmaps", forA)).status, 200);
    const otherNamespace = await direct("a", "/api/v1/namespaces/other/configmaps", forA);
    assert.equal(otherNamespace.status, 403, "the host's RBAC decides");
    const onB = await direct("b", "/api/v1/namespaces/default/configmaps", forA);
    assert.equal(onB.status, 403, onB.body);
    assert.match(onB.json().message, /does not include cluster "b"/);
    assert.equal((await direct("a", "/api/v1/namespaces/team-a/configmaps", unscoped)).status, 403);
    assert.equal((await direct("a", "/api/v1/namespaces/team-a/configmaps", "not-a-token")).status, 401);
    // One kept-alive connection whose requests change tokens (the agent remembers a connection's last token): each
    // request is judged by its own, a token one byte longer than a good one included.
    const shared = new AuthClient(endpoints.a.url, endpoints.a.certificateAuthority, { maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      const statuses: number[] = [];
      for (const bearer of [forA, unscoped, "not-a-token", forA, `${forA}x`, forA]) {
        const reply = await shared.send("GET", "/api/v1/namespaces/team-a/configmaps", { token: bearer });
        statuses.push(reply.status);
        for (const free of Object.values(shared.agent.freeSockets))
          for (const socket of free ?? []) sockets.add(socket);
      }
      assert.deepEqual(statuses, [200, 403, 401, 200, 401, 200]);
      assert.equal(sockets.size, 1, "every request went over the one connection");
    } finally {
      shared.close();
    }

    // Revoked on the platform (tokenGeneration raised): refused at the direct endpoint too, within seconds.
    await client.createUser(admin, "carol");
    const carolAccess = await client.send("PATCH", `${MGMT}/clusters/a`, {
      token: admin,
      body: {
        spec: {
          access: [
            { verbs: ["use"], users: ["dev"] },
            { verbs: ["use"], users: ["carol"] },
          ],
        },
      },
      contentType: "application/merge-patch+json",
    });
    assert.equal(carolAccess.status, 200, carolAccess.body);
    const carolToken = (
      await client.send("POST", `${MGMT}/directclusterendpointtokens`, {
        token: await client.createKey(admin, "carol-key", { user: "carol" }),
        body: { apiVersion: V1, kind: "DirectClusterEndpointToken", spec: { scope: { clusters: [{ cluster: "a" }] } } },
      })
    ).json().status.token as string;
    assert.equal((await direct("a", "/api/v1/namespaces/team-a/configmaps", carolToken)).status, 403, "host RBAC");
    const raised = await client.send("PATCH", `${MGMT}/users/carol`, {
      token: admin,
      body: { spec: { tokenGeneration: 1 } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(raised.status, 200, raised.body);
    await waitFor(
      async () => (await direct("a", "/api/v1/namespaces/team-a/configmaps", carolToken)).status === 401,
      "the revoked token is refused at the direct endpoint",
    );

    await platform.stop();
    try {
      const http = new AuthClient(endpoints.a.url, endpoints.a.certificateAuthority);
      const kubectlFile = join(root, "direct.kubeconfig");
      await writeFile(
        kubectlFile,
        [
          "apiVersion: v1",
          "kind: Config",
          "current-context: d",
          "contexts: [{name: d, context: {cluster: d, user: d}}]",
          `clusters: [{name: d, cluster: {server: '${endpoints.a.url}', certificate-authority-data: ${Buffer.from(endpoints.a.certificateAuthority).toString("base64")}}}]`,
          `users: [{name: d, user: {token: ${forA}}}]`,
          "",
        ].join("\n"),
      );
      const listed = await new Kubectl(kubectlFile).ok(["get", "configmaps", "-n", "team-a", "-o", "name"]);
      assert.match(listed, /configmap\/through-platform/);
      const refused = await http.send("GET", "/api/v1/namespaces/default/configmaps", { token: unscoped });
      assert.equal(refused.status, 403);
      http.close();
    } finally {
      client.close();
      await startPlatform();
    }
    await waitFor(
      async () => (await cluster("a")).status?.online === true,
      "the agent reconnects to the restarted platform",
    );
  });
});
