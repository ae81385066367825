// The platform as a container, as an operator runs it: data directory on a volume, the host's network (or a published
// port), a login from the host with the kubeconfig it wrote, `podman stop` (SIGTERM) under writes with no
// acknowledged create lost, and a new container on the same volume with the data and keys still there.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { API, AuthClient } from "./support/auth-client.ts";
import { containersMissing, podman, TestContainers, testImage } from "./support/containers.ts";
import { Kubectl, kubectlAvailable } from "./support/kubectl.ts";
import {
  DATA_DIR,
  type StartedContainer,
  startPlatformContainer,
  stopContainer,
  waitForOutput,
} from "./support/platform-container.ts";
import { waitFor } from "./support/wait-for.ts";
import { createTeamsUntilStopped } from "./support/write-load.ts";

const GROUP = { group: "management.platform.sh", version: "v1" };

async function teamNames(client: AuthClient, token: string): Promise<Set<string>> {
  const list = await client.send("GET", `${API}/teams`, { token });
  assert.equal(list.status, 200, list.body);
  return new Set(list.json().items.map((team: { metadata: { name: string } }) => team.metadata.name));
}

describe("the platform in a container", { skip: containersMissing(), timeout: 900_000 }, () => {
  const containers = new TestContainers();
  let image: string;
  let volume: string;
  let data: string;
  let platform: StartedContainer;

  before(
    async () => {
      image = (await testImage()).ref;
      volume = await containers.volume("data");
      data = await containers.volumePath(volume);
      platform = await startPlatformContainer(containers, image, volume);
    },
    { timeout: 900_000 },
  );
  after(() => containers.removeAll());

  it("runs as the image's user with its data on the volume; the host logs in with the kubeconfig it wrote", async () => {
    const pid = (await podman(["inspect", "--format", "{{.State.Pid}}", platform.name])).trim();
    assert.match(readFileSync(`/proc/${pid}/status`, "utf8"), /^Uid:\s+65532\s/m, "not root on the host either");
    assert.equal(
      (await podman(["inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", platform.name])).trim(),
      "true",
    );
    const kubeconfig = join(data, "admin.kubeconfig");
    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    assert.equal(config.getCurrentCluster()?.server, `${platform.url}/kubernetes/management`);
    const users = await config.makeApiClient(CustomObjectsApi).listClusterCustomObject({ ...GROUP, plural: "users" });
    assert.deepEqual(
      (users as { items: { metadata: { name: string } }[] }).items.map((user) => user.metadata.name),
      ["admin"],
    );
    if (kubectlAvailable) assert.match(await new Kubectl(kubeconfig).ok(["get", "users"]), /^admin\s/m);
  });

  it("passes its health check (GET /readyz from inside the container)", async () => {
    await waitFor(() => podman(["healthcheck", "run", platform.name]).then(() => true), "a passing health check");
    const probe = await podman(["exec", platform.name, "/usr/local/bin/node", "/opt/virtualcluster/healthcheck.mjs"]);
    assert.equal(probe.trim(), `${platform.url}/readyz: 200 ok`);
  });

  it("stops on SIGTERM under writes with no acknowledged create lost; a new container on the volume keeps data and keys", async () => {
    const adminKey = readFileSync(join(data, "admin-access-key"), "utf8").trim();
    const caPem = readFileSync(join(data, "pki", "ca.crt"), "utf8");
    const encryptionKey = readFileSync(join(data, "pki", "encryption.key"), "utf8");
    const client = new AuthClient(platform.url, caPem);
    const load = createTeamsUntilStopped(client, adminKey, "during-stop");
    await load.reached(20);
    const exitCode = await stopContainer(containers, platform.name);
    const ends = await load.done;
    client.agent.destroy();
    assert.equal(exitCode, 0, "a graceful stop");
    assert.match(await containers.logs(platform.name), /"msg":"shutting down"/);
    assert.ok(load.acknowledged.length >= 20, `${load.acknowledged.length} acknowledged; writers ended: ${ends}`);

    platform = await startPlatformContainer(containers, image, volume);
    assert.doesNotMatch(await containers.logs(platform.name), /shown only this once/, "no second admin");
    assert.equal(readFileSync(join(data, "pki", "ca.crt"), "utf8"), caPem, "the same CA");
    assert.equal(readFileSync(join(data, "pki", "encryption.key"), "utf8"), encryptionKey, "the same encryption key");
    const again = new AuthClient(platform.url, caPem);
    const stored = await teamNames(again, adminKey);
    again.agent.destroy();
    const lost = load.acknowledged.filter((name) => !stored.has(name));
    assert.deepEqual(lost, [], `${lost.length} of ${load.acknowledged.length} acknowledged creates lost`);
  });

  it("serves its default command (0.0.0.0:8443 in its own network namespace) through a published port", async () => {
    const published = await containers.volume("published");
    const name = await containers.run("published", [
      "--read-only",
      "--publish=127.0.0.1::8443",
      `--volume=${published}:${DATA_DIR}`,
      image,
    ]);
    await waitForOutput(containers, name, /Platform listening on https:\/\/127\.0\.0\.1:8443/);
    const hostPort = (await podman(["port", name, "8443/tcp"])).trim().split(":").pop();
    const dir = await containers.volumePath(published);
    const client = new AuthClient(`https://127.0.0.1:${hostPort}`, readFileSync(join(dir, "pki", "ca.crt"), "utf8"));
    const token = readFileSync(join(dir, "admin-access-key"), "utf8").trim();
    await waitFor(async () => (await client.send("GET", "/readyz")).status === 200, "/readyz through the port");
    const users = await client.send("GET", `${API}/users`, { token });
    client.agent.destroy();
    assert.equal(users.status, 200, users.body);
  });
});
