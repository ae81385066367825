// Project secrets delivered as Kubernetes Secrets (ProjectSecret spec.deliverTo), every part a real process over
// HTTPS: the platform, a stand-alone host API server connected with `virtualcluster cluster connect`, and its agent.
// A space receives the secret in its namespace on the host, a virtual cluster the platform runs on that cluster
// receives it through its own API; a changed value follows, a withdrawn delivery removes the Secret, and a Secret the
// platform did not make is never replaced.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type AgentProcess, startAgentProcess } from "./support/agent-process.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const SECRETS = `${MGMT}/namespaces/p-shop/projectsecrets`;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

describe("project secrets delivered to spaces and virtual clusters", { skip: kubectlSkip }, () => {
  let root: string;
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  let hostServer: ClusterApiServerProcess;
  let agent: AgentProcess;
  let host: Kubectl;

  const send = (method: string, path: string, body?: unknown, contentType?: string) =>
    client.send(method, path, { token: admin, body, contentType });
  const hostSecret = async (namespace: string, name: string) => {
    const got = await host.run(["get", "secret", name, "-n", namespace, "-o", "json"]);
    return got.code === 0 ? (JSON.parse(got.stdout) as { data?: Record<string, string> }) : undefined;
  };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "secret-delivery-"));
    platform = await startPlatformProcess({ extraArgs: ["--cluster-heartbeat-seconds", "1"] });
    client = new AuthClient(platform.url, platform.caPem);
    admin = platform.adminKey;
    hostServer = await startClusterApiServerProcess();
    host = new Kubectl(hostServer.kubeconfig);
    const env = { ...process.env, VIRTUALCLUSTER_HOME: join(root, "home") };
    const caFile = join(root, "platform-ca.pem");
    await writeFile(caFile, platform.caPem);
    const login = await runCli(["platform", "login", platform.url, "--ca-file", caFile, "--access-key", admin], {
      env,
    });
    assert.equal(login.code, 0, login.stderr);
    const agentDir = join(root, "agent");
    const connected = await runCli(
      // Any free port for the direct endpoint: another copy of the suite on the machine may hold the default.
      [
        "cluster",
        "connect",
        "a",
        "--host-kubeconfig",
        hostServer.kubeconfig,
        "--data-dir",
        agentDir,
        "--direct-port",
        "0",
        "--no-start",
      ],
      { env },
    );
    assert.equal(connected.code, 0, connected.stderr);
    agent = await startAgentProcess(agentDir);
    await waitFor(
      async () => (await send("GET", `${MGMT}/clusters/a`)).json().status?.online === true,
      "cluster a online",
    );
    const project = await send("POST", `${MGMT}/projects`, {
      apiVersion: V1,
      kind: "Project",
      metadata: { name: "shop" },
      spec: {},
    });
    assert.equal(project.status, 201, project.body);
  });

  after(async () => {
    await agent?.stop();
    client?.close();
    await platform?.stop();
    await hostServer?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("a space receives the project secret in its namespace, follows a change and loses it when withdrawn", async () => {
    const space = await send("POST", `${MGMT}/namespaces/p-shop/spaceinstances`, {
      apiVersion: V1,
      kind: "SpaceInstance",
      metadata: { name: "shop-dev" },
      spec: { clusterRef: { cluster: "a" } },
    });
    assert.equal(space.status, 201, space.body);
    const created = await send("POST", SECRETS, {
      apiVersion: V1,
      kind: "ProjectSecret",
      metadata: { name: "db" },
      spec: {
        stringData: { password: "first-value" },
        deliverTo: [{ space: "shop-dev", secretName: "db-credentials" }],
      },
    });
    assert.equal(created.status, 201, created.body);
    await waitFor(
      async () => (await hostSecret("shop-dev", "db-credentials"))?.data?.password === b64("first-value"),
      "the space's namespace holds the Secret",
      60,
    );
    const changed = await send(
      "PATCH",
      `${SECRETS}/db`,
      { spec: { stringData: { password: "second-value" } } },
      "application/merge-patch+json",
    );
    assert.equal(changed.status, 200, changed.body);
    await waitFor(
      async () => (await hostSecret("shop-dev", "db-credentials"))?.data?.password === b64("second-value"),
      "the Secret follows the changed value",
      60,
    );
    const withdrawn = await send(
      "PATCH",
      `${SECRETS}/db`,
      { spec: { deliverTo: null } },
      "application/merge-patch+json",
    );
    assert.equal(withdrawn.status, 200, withdrawn.body);
    await waitFor(
      async () => (await hostSecret("shop-dev", "db-credentials")) === undefined,
      "the withdrawn Secret is deleted",
      60,
    );
  });

  it("a Secret the platform did not make is left alone, and the space says why", async () => {
    await host.ok(["create", "secret", "generic", "taken", "-n", "shop-dev", "--from-literal=own=mine"]);
    const created = await send("POST", SECRETS, {
      apiVersion: V1,
      kind: "ProjectSecret",
      metadata: { name: "taken" },
      spec: { stringData: { token: "platform-value" }, deliverTo: [{ space: "shop-dev" }] },
    });
    assert.equal(created.status, 201, created.body);
    await waitFor(
      async () =>
        /Secret shop-dev\/taken already exists and was not made by the platform/.test(
          (await send("GET", `${MGMT}/namespaces/p-shop/spaceinstances/shop-dev`)).json().status?.message ?? "",
        ),
      "the space's status names the Secret it left alone",
      60,
    );
    assert.equal((await hostSecret("shop-dev", "taken"))?.data?.own, b64("mine"));
    assert.doesNotMatch(
      (await send("GET", `${MGMT}/namespaces/p-shop/spaceinstances/shop-dev`)).body,
      /platform-value|cGxhdGZvcm0tdmFsdWU/,
    );
  });

  it("a virtual cluster run on the cluster receives the project secret through its own API", async () => {
    const created = await send("POST", SECRETS, {
      apiVersion: V1,
      kind: "ProjectSecret",
      metadata: { name: "api-token" },
      spec: {
        stringData: { token: "vc-value" },
        deliverTo: [{ virtualClusterInstance: "vc1", namespace: "apps" }],
      },
    });
    assert.equal(created.status, 201, created.body);
    const instance = await send("POST", `${MGMT}/namespaces/p-shop/virtualclusterinstances`, {
      apiVersion: V1,
      kind: "VirtualClusterInstance",
      metadata: { name: "vc1" },
      spec: { clusterRef: { cluster: "a" } },
    });
    assert.equal(instance.status, 201, instance.body);
    await waitFor(
      async () =>
        (await send("GET", `${MGMT}/namespaces/p-shop/virtualclusterinstances/vc1`)).json().status?.online === true,
      "the virtual cluster is online",
      90,
    );
    const kubeconfig = await send("POST", `${MGMT}/namespaces/p-shop/virtualclusterinstances/vc1/kubeconfig`, {
      apiVersion: V1,
      kind: "VirtualClusterInstanceKubeConfig",
      spec: {},
    });
    assert.equal(kubeconfig.status, 201, kubeconfig.body);
    const file = join(root, "vc1.kubeconfig");
    await writeFile(file, kubeconfig.json().status.kubeConfig);
    const virtual = new Kubectl(file);
    const read = async () => {
      const got = await virtual.run(["get", "secret", "api-token", "-n", "apps", "-o", "json"]);
      return got.code === 0 ? (JSON.parse(got.stdout) as { data?: Record<string, string> }) : undefined;
    };
    await waitFor(async () => (await read())?.data?.token === b64("vc-value"), "the virtual cluster holds it", 90);
    const withdrawn = await send("DELETE", `${SECRETS}/api-token`);
    assert.equal(withdrawn.status, 200, withdrawn.body);
    await waitFor(async () => (await read()) === undefined, "a deleted project secret leaves the virtual cluster", 60);
  });
});
