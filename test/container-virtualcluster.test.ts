// The virtual cluster control plane as a container ("Endpoint syncing is supported when the control plane runs as a
// container"): `virtualcluster create --container` against a real platform and host API server, through the steps
// test/cli-lifecycle.test.ts and the README walkthrough take with the background process: registered and online,
// a Service and its Endpoints synced and patched, pause (offline), resume (the sync goes on), delete. The container
// runs as the image's user with a read-only root, and never gets the deployer's host kubeconfig.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { clusterPaths } from "../src/virtualcluster/lifecycle/local-clusters.ts";
import { runtimeContainerName } from "../src/virtualcluster/lifecycle/runtime-container.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { type CliRun, runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { containersMissing, podman, podmanEnv, testImage } from "./support/containers.ts";
import { maybe } from "./support/kube-objects.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const SETTINGS = `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["db-host"]
          expression: 'value ? virtualToHostDNS(value) : value'
`;

const skip = containersMissing();

describe("virtualcluster create --container", { skip, timeout: 900_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), "vc-container-"));
  const home = join(root, ".virtualcluster");
  const settings = join(root, "virtualcluster.yaml");
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let hostCore: CoreV1Api;
  let client: AuthClient;
  let image: string;

  const cli = async (args: string[]): Promise<CliRun> => {
    const env = podmanEnv({ VIRTUALCLUSTER_HOME: home, HOME: root, LOG_LEVEL: "info" });
    for (const name of ["KUBECONFIG", "LICENSE", "NO_COLOR"]) delete env[name];
    const run = await runCli(args, { env });
    assert.equal(run.code, 0, `virtualcluster ${args.join(" ")}:\n${run.stdout}${run.stderr}`);
    return run;
  };
  const instance = async (name: string) =>
    (
      await client.send("GET", `${API}/namespaces/p-default/virtualclusterinstances/${name}`, {
        token: platform.adminKey,
      })
    ).json();

  before(
    async () => {
      mkdirSync(home, { recursive: true });
      writeFileSync(settings, SETTINGS);
      // The image first: building it is the heavy part, and the servers start sooner without it alongside.
      image = (await testImage()).ref;
      [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
      const config = new KubeConfig();
      config.loadFromFile(host.kubeconfig);
      hostCore = config.makeApiClient(CoreV1Api);
      client = new AuthClient(platform.url, platform.caPem);
      const caFile = join(platform.dataDir, "pki", "ca.crt");
      await cli(["platform", "login", platform.url, "--ca-file", caFile, "--access-key", platform.adminKey]);
    },
    { timeout: 900_000 },
  );

  const name = "web";
  const namespace = "team-c";
  const hostName = `db-x-default-x-${name}`;
  const paths = () => clusterPaths(namespace, name, home);
  const container = () => runtimeContainerName({ name, namespace }, paths());
  const virtualCore = () => {
    const config = new KubeConfig();
    config.loadFromFile(paths().adminKubeconfig);
    return config.makeApiClient(CoreV1Api);
  };

  after(async () => {
    await podman(["rm", "--force", "--volumes", "--time=5", "--ignore", container()]).catch(() => undefined);
    client?.agent.destroy();
    await Promise.all([platform?.stop(), host?.stop()]);
    rmSync(root, { recursive: true, force: true });
  });

  it("create --container with an image this machine lacks fails in one line before it changes anything", async () => {
    const env = podmanEnv({ VIRTUALCLUSTER_HOME: home, HOME: root });
    const missing = `${image}-missing`;
    const run = await runCli(
      ["create", "x", "-n", "never-made", "--host-kubeconfig", host.kubeconfig, "--container-image", missing],
      { env },
    );
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(`the image ${missing} is not on this machine: build it with \`npm run image\``),
    );
    assert.equal(await maybe(() => hostCore.readNamespace({ name: "never-made" })), undefined);
  });

  it("create runs it in a container, registered on the platform and online", async () => {
    const created = await cli([
      ...["create", name, "-n", namespace, "-f", settings, "--host-kubeconfig", host.kubeconfig],
      ...["--container", "--container-image", image],
    ]);
    assert.match(created.stdout, new RegExp(`Created virtual cluster ${name} in namespace ${namespace}`));
    assert.match(created.stdout, new RegExp(`Container: ${container()} \\(${image}\\)`));
    await waitFor(async () => (await instance(name)).status?.online === true, "the instance online");
    const listed = JSON.parse((await cli(["list", "-o", "json"])).stdout).items[0];
    assert.equal(listed.status, "running");
    assert.deepEqual(listed.container, { name: container(), image });
  });

  it("runs as the image's user with a read-only root and its directory only; the deployer's kubeconfig stays root's", async () => {
    const [running, pid, readOnly] = (
      await podman([
        "inspect",
        "--format",
        "{{.State.Running}} {{.State.Pid}} {{.HostConfig.ReadonlyRootfs}}",
        container(),
      ])
    )
      .trim()
      .split(" ");
    assert.equal(running, "true");
    assert.equal(readOnly, "true");
    assert.match(readFileSync(`/proc/${pid}/status`, "utf8"), /^Uid:\s+65532\s/m);
    const deployer = statSync(paths().hostKubeconfig);
    assert.equal(deployer.uid, 0);
    assert.equal(deployer.mode & 0o777, 0o600, "the container's user cannot read it");
    assert.equal(statSync(join(paths().dir, "cluster.db")).uid, 65532, "the runtime's own files are its user's");
    const mounts = JSON.parse(await podman(["inspect", "--format", "{{json .Mounts}}", container()]));
    assert.deepEqual(
      mounts.map((mount: { Type: string; Destination: string }) => `${mount.Type} ${mount.Destination}`),
      [`bind ${paths().dir}`],
      "its directory only: no anonymous volume left behind",
    );
  });

  it("syncs a Service and its Endpoints to the host, patched", async () => {
    const virtual = virtualCore();
    await virtual.createNamespacedService({
      namespace: "default",
      body: { metadata: { name: "db" }, spec: { ports: [{ port: 5432 }] } },
    });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: {
        metadata: { name: "db", annotations: { "db-host": "db.default.svc.cluster.local" } },
        subsets: [{ addresses: [{ ip: "10.0.0.15" }], ports: [{ port: 5432 }] }],
      },
    });
    await waitFor(
      async () => Boolean(await maybe(() => hostCore.readNamespacedEndpoints({ namespace, name: hostName }))),
      "the Endpoints on the host",
    );
    const endpoints = await hostCore.readNamespacedEndpoints({ namespace, name: hostName });
    assert.equal(endpoints.metadata?.annotations?.["db-host"], `${hostName}.${namespace}.svc.cluster.local`);
    assert.equal(endpoints.subsets?.[0].addresses?.[0].ip, "10.0.0.15");
    assert.ok(await hostCore.readNamespacedService({ namespace, name: hostName }));
  });

  it("pause stops the container (the instance goes offline); resume starts it and the sync goes on", async () => {
    await cli(["pause", name, "-n", namespace]);
    await waitFor(async () => (await instance(name)).status?.online === false, "the instance offline");
    await assert.rejects(podman(["container", "exists", container()]), "no container while paused");
    await cli(["resume", name, "-n", namespace]);
    await virtualCore().patchNamespacedEndpoints({
      namespace: "default",
      name: "db",
      body: [{ op: "replace", path: "/subsets/0/addresses/0/ip", value: "10.0.0.16" }],
    });
    await waitFor(
      async () =>
        (await hostCore.readNamespacedEndpoints({ namespace, name: hostName })).subsets?.[0].addresses?.[0].ip ===
        "10.0.0.16",
      "the changed Endpoints on the host",
    );
  });

  it("delete stops and removes the container and what create made", async () => {
    await cli(["delete", name, "-n", namespace]);
    assert.equal(await maybe(() => hostCore.readNamespacedEndpoints({ namespace, name: hostName })), undefined);
    const gone = await client.send("GET", `${API}/namespaces/p-default/virtualclusterinstances/${name}`, {
      token: platform.adminKey,
    });
    assert.equal(gone.status, 404);
    await assert.rejects(podman(["container", "exists", container()]));
  });
});
