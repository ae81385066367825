// A connected cluster's agent running the virtual clusters placed on it as containers (`virtualcluster agent --runtime
// container`): the platform, a stand-alone host API server and the agent are real processes; the virtual cluster the
// platform places runs in a podman container of the image (read-only root, the image's user, the host's network),
// comes online, syncs a Service created in it to its host namespace, keeps its access key out of its files and
// command line, and is gone, container included, once its instance is deleted.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { chooseRuntimeContainer } from "../src/agent/runtime-launch.ts";
import { type AgentProcess, startAgentProcess } from "./support/agent-process.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { runCli } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { containersMissing, podman, podmanEnv, testImage } from "./support/containers.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const LABEL = "virtualcluster.platform.sh/agent-runtime";

const skip = containersMissing() || kubectlSkip;

describe("an agent running placed virtual clusters in containers", { skip, timeout: 900_000 }, () => {
  let root: string;
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let agent: AgentProcess;
  let client: AuthClient;
  let image: string;
  const admin = () => platform.adminKey;
  const instance = () =>
    client.send("GET", `${MGMT}/namespaces/p-edge/virtualclusterinstances/web`, { token: admin() });
  /**
   * The names of this test's agent's runtime containers, running or not: the label holds the runtime's directory,
   * which is under this test's own; another copy of the suite on the machine has agents of its own.
   */
  const containers = async () =>
    (await podman(["ps", "--all", "--filter", `label=${LABEL}`, "--format", `{{.Names}} {{index .Labels "${LABEL}"}}`]))
      .split("\n")
      .map((line) => line.trim().split(" "))
      .filter(([name, dir]) => name && dir?.startsWith(`${root}/`))
      .map(([name]) => name);

  before(
    async () => {
      root = await mkdtemp(join(tmpdir(), "container-agent-"));
      // The image first: building it is the heavy part, and the servers start sooner without it alongside.
      image = (await testImage()).ref;
      [platform, host] = await Promise.all([
        startPlatformProcess({ extraArgs: ["--cluster-heartbeat-seconds", "1"] }),
        startClusterApiServerProcess(),
      ]);
      client = new AuthClient(platform.url, platform.caPem);
      const env = { ...process.env, VIRTUALCLUSTER_HOME: join(root, "home") };
      const caFile = join(root, "platform-ca.pem");
      await writeFile(caFile, platform.caPem);
      const login = await runCli(["platform", "login", platform.url, "--ca-file", caFile, "--access-key", admin()], {
        env,
      });
      assert.equal(login.code, 0, login.stderr);
      const agentDir = join(root, "agent");
      // Any free port for the direct endpoint: another copy of the suite on the machine may hold the default.
      const connect = [
        "cluster",
        "connect",
        "edge",
        "--host-kubeconfig",
        host.kubeconfig,
        "--data-dir",
        agentDir,
        "--direct-port",
        "0",
      ];
      const connected = await runCli([...connect, "--no-start"], { env });
      assert.equal(connected.code, 0, connected.stderr);
      agent = await startAgentProcess(agentDir, podmanEnv(), undefined, [
        "--runtime",
        "container",
        "--container-image",
        image,
      ]);
      const project = await client.send("POST", `${MGMT}/projects`, {
        token: admin(),
        body: { apiVersion: V1, kind: "Project", metadata: { name: "edge" }, spec: {} },
      });
      assert.equal(project.status, 201, project.body);
    },
    { timeout: 900_000 },
  );

  after(async () => {
    await agent?.stop();
    client?.close();
    await platform?.stop();
    await host?.stop();
    for (const name of await containers().catch(() => [])) {
      await podman(["rm", "--force", name]).catch(() => undefined);
    }
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("says at start that placed virtual clusters run in containers of the image", () => {
    assert.match(agent.output(), new RegExp(`Virtual clusters placed here run in containers of ${image}`));
  });

  it("--runtime auto picks containers when the image is on this machine, processes when not; container insists", async () => {
    process.env.CONTAINERS_CONF = podmanEnv().CONTAINERS_CONF; // the machine's podman settings, as the agent has them
    const absent = "localhost/virtualcluster-absent:none";
    assert.deepEqual(await chooseRuntimeContainer("auto", image), { image });
    assert.equal(await chooseRuntimeContainer("auto", absent), undefined);
    assert.equal(await chooseRuntimeContainer("process", image), undefined);
    await assert.rejects(
      chooseRuntimeContainer("container", absent),
      /the image localhost\/virtualcluster-absent:none is not on this machine/,
    );
  });

  it("runs a placed virtual cluster in a container that syncs a Service to its host namespace", async () => {
    const created = await client.send("POST", `${MGMT}/namespaces/p-edge/virtualclusterinstances`, {
      token: admin(),
      body: {
        apiVersion: V1,
        kind: "VirtualClusterInstance",
        metadata: { name: "web" },
        spec: { clusterRef: { cluster: "edge" } },
      },
    });
    assert.equal(created.status, 201, created.body);
    await waitFor(async () => (await instance()).json().status?.online === true, "the virtual cluster is online");
    const running = await containers();
    assert.equal(running.length, 1, running.join("\n"));
    const name = running[0];
    const inspected = JSON.parse(await podman(["container", "inspect", name]))[0];
    assert.equal(inspected.State.Running, true);
    assert.equal(inspected.Config.User, "65532:65532", "the image's user");
    assert.equal(inspected.HostConfig.ReadonlyRootfs, true, "a read-only root");
    assert.equal(inspected.HostConfig.NetworkMode, "host");
    const files = join(root, "agent", "virtualclusters", created.json().metadata.uid);
    const key = (await readFile(join(files, "access-key"), "utf8")).trim();
    assert.ok(key.length > 20);
    assert.ok(!JSON.stringify([inspected.Config.Cmd, inspected.Args]).includes(key), "no access key on a command line");

    const kubeconfig = await client.send("POST", `${MGMT}/namespaces/p-edge/virtualclusterinstances/web/kubeconfig`, {
      token: admin(),
      body: { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec: {} },
    });
    assert.equal(kubeconfig.status, 201, kubeconfig.body);
    const file = join(root, "web.kubeconfig");
    await writeFile(file, kubeconfig.json().status.kubeConfig);
    await new Kubectl(file).ok(["create", "service", "clusterip", "db", "--tcp=5432:5432"]);
    const hostctl = new Kubectl(host.kubeconfig);
    const namespace = created.json().spec.clusterRef.namespace;
    await waitFor(
      async () =>
        (await hostctl.run(["get", "services", "-n", namespace, "-o", "name"])).stdout.includes("db-x-default-x-web"),
      "the Service synced into the host namespace",
    );
    const log = await readFile(join(files, "runtime.log"), "utf8");
    assert.match(log, /Virtual cluster web listening on/, "the container's output reaches runtime.log");
  });

  it("removes the container with its instance", async () => {
    const deleted = await client.send("DELETE", `${MGMT}/namespaces/p-edge/virtualclusterinstances/web`, {
      token: admin(),
    });
    assert.equal(deleted.status, 200, deleted.body);
    await waitFor(async () => (await instance()).status === 404, "the instance is gone once its agent removed it");
    await waitFor(async () => (await containers()).length === 0, "its container is gone");
  });
});
