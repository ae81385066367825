// A connected cluster's agent in front of two platform replicas on one etcd: it connects to the first address it
// is given; a request sent to the other replica is relayed to the one holding the tunnel; when the first replica
// stops, the agent reconnects to the second, which reports the cluster online and serves it itself.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureServingCertificates } from "../src/pki/tls.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { type AgentProcess, startAgentProcess } from "./support/agent-process.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { startTcpForwarder, type TcpForwarder } from "./support/tcp-forwarder.ts";
import { waitFor } from "./support/wait-for.ts";

const MGMT = `/kubernetes/management${API}`;

describe("a connected cluster's agent and platform replicas on etcd", { skip: etcdMissing() }, () => {
  let etcd: EtcdCluster;
  let root: string;
  let replicas: PlatformProcess[] = [];
  let host: ClusterApiServerProcess;
  let agent: AgentProcess;
  let admin = "";
  let forwarder: TcpForwarder;

  const clusterOn = async (replica: PlatformProcess) => {
    const http = new AuthClient(replica.url, replica.caPem);
    try {
      return (await http.send("GET", `${MGMT}/clusters/r`, { token: admin })).json();
    } finally {
      http.close();
    }
  };
  const proxiedThrough = async (replica: PlatformProcess) => {
    const http = new AuthClient(replica.url, replica.caPem);
    try {
      return await http.send("GET", "/kubernetes/cluster/r/api/v1/namespaces", { token: admin });
    } finally {
      http.close();
    }
  };

  before(async () => {
    etcd = await startEtcdCluster({ members: 1 });
    root = await mkdtemp(join(tmpdir(), "cluster-replicas-"));
    const keyFile = join(root, "encryption.key");
    await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const dirs = ["x", "y"].map((name) => join(root, name));
    for (const dir of dirs) await mkdir(dir, { mode: 0o700 });
    await ensureServingCertificates({ dataDir: dirs[0], hosts: ["127.0.0.1"] });
    await cp(join(dirs[0], "pki"), join(dirs[1], "pki"), { recursive: true });
    const args = [
      "--store",
      "etcd",
      "--etcd-endpoints",
      etcd.endpoints.join(","),
      "--encryption-key-file",
      keyFile,
      "--cluster-heartbeat-seconds",
      "1",
    ];
    // The first replica tells the others to reach it through a forwarder (--advertise-url), as behind a load
    // balancer or NAT: relayed requests must go there, not to its listen address.
    forwarder = await startTcpForwarder();
    const advertised = ["--advertise-url", `https://127.0.0.1:${forwarder.port}`];
    replicas = await Promise.all(
      dirs.map((dataDir, i) => startPlatformProcess({ dataDir, extraArgs: i === 0 ? [...args, ...advertised] : args })),
    );
    forwarder.forwardTo(Number(new URL(replicas[0].url).port));
    admin = replicas.map((replica) => replica.adminKey).find(Boolean) ?? "";
    host = await startClusterApiServerProcess();
    // The platform's admin may read namespaces on the host (its RBAC decides what platform users do there).
    await new Kubectl(host.kubeconfig).ok([
      "create",
      "clusterrolebinding",
      "platform-admin-view",
      "--clusterrole=view",
      "--user=platform:user:admin",
    ]);
    const env = { ...process.env, VIRTUALCLUSTER_HOME: join(root, "home") };
    const caFile = join(root, "ca.pem");
    await writeFile(caFile, replicas[0].caPem);
    const [x, y] = replicas;
    const login = await runCli(["platform", "login", x.url, "--ca-file", caFile, "--access-key", admin], { env });
    assert.equal(login.code, 0, login.stderr);
    const agentDir = join(root, "agent");
    const connected = await runCli(
      [
        "cluster",
        "connect",
        "r",
        "--host-kubeconfig",
        host.kubeconfig,
        "--data-dir",
        agentDir,
        "--platform",
        y.url,
        "--no-direct",
        "--no-start",
      ],
      { env },
    );
    assert.equal(connected.code, 0, connected.stderr);
    agent = await startAgentProcess(agentDir);
  });

  after(async () => {
    await agent?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await forwarder?.close();
    await host?.stop();
    await etcd?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("the agent connects to the first address; the other replica relays requests to it at its advertised URL", async () => {
    const [x, y] = replicas;
    await waitFor(async () => (await clusterOn(y)).status?.online === true, "cluster r online (seen on y)");
    assert.equal((await clusterOn(y)).status.connection.replica, `https://127.0.0.1:${forwarder.port}`);
    const forwarded = forwarder.connections();
    for (const replica of [x, y]) {
      const reply = await proxiedThrough(replica);
      assert.equal(reply.status, 200, `${replica.url}: ${reply.body}`);
      assert.ok(
        reply.json().items.some((item: { metadata: { name: string } }) => item.metadata.name === "kube-system"),
      );
    }
    assert.ok(forwarder.connections() > forwarded, "y reached x through the advertised address");
  });

  it("a cluster's metrics federation answers on the replica without its tunnel, relayed to the one holding it", async () => {
    const [, y] = replicas;
    const http = new AuthClient(y.url, y.caPem);
    try {
      const config = await http.send("PATCH", `${MGMT}/configs/platform-config`, {
        token: admin,
        body: { spec: { raw: `costControl: {"enabled": true}\n` } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(config.status, 200, config.body);
      const metricsReady = async () =>
        (await clusterOn(y)).status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === "MetricsReady" && c.status === "True",
        );
      await waitFor(metricsReady, "cluster r's metrics Prometheus running");
      const advertised = `https://127.0.0.1:${forwarder.port}`;
      assert.equal((await clusterOn(y)).status.connection.replica, advertised, "the tunnel is on x");
      const federate = `/platform/clusters/r/federate?match[]=${encodeURIComponent('{__name__=~"vcp_usage_.+"}')}`;
      // Once the agent's Prometheus has scraped the agent, its usage series come back through y.
      await waitFor(async () => {
        const answer = await http.send("GET", federate, { token: admin });
        assert.equal(answer.status, 200, answer.body);
        return /^vcp_usage_\w+\{/m.test(answer.body);
      }, "the agent's usage series through y");
    } finally {
      http.close();
    }
  });

  it("when the first replica stops, the agent reconnects to the second, which serves the cluster itself", async () => {
    const [x, y] = replicas;
    await x.stop();
    replicas = [y];
    await waitFor(async () => (await clusterOn(y)).status?.connection?.replica === y.url, "the tunnel moved to y");
    await waitFor(async () => (await clusterOn(y)).status?.online === true, "cluster r online again");
    const reply = await proxiedThrough(y);
    assert.equal(reply.status, 200, reply.body);
    assert.match(agent.output(), /connected to the platform.*\n[\s\S]*connected to the platform/, "connected twice");
  });
});
