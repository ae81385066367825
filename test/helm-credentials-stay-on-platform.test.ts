// A non-admin who owns a Cluster runs an agent of their own (they may mint its key). As an ordinary project member
// (edit) they put a space on their own cluster and a HelmRelease into it naming a repository of the Config whose
// credentials are Config secrets (admins only). Their agent asks for the chart and gets it: the platform fetched the
// archive with the repository's credentials, and the agent receives the archive alone, never the password.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { gunzipSync } from "node:zlib";
import type { TunnelClient } from "../src/agent/tunnel-client.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { type HelmRepoServer, startHelmRepoServer } from "./support/helm-repo-server.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { mintAgentKey, startScriptedAgent } from "./support/scripted-agent.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const PASSWORD = "admin-only-repo-s3cret-71d0";

let root: string;
let repo: HelmRepoServer;
let platform: PlatformProcess;
let client: AuthClient;
let rogue: TunnelClient | undefined;
const received: string[] = [];

before(async () => {
  root = await mkdtemp(join(tmpdir(), "helm-credentials-"));
  repo = await startHelmRepoServer({
    username: "ci",
    password: PASSWORD,
    charts: [{ name: "anything", version: "1.0.0", readme: "the private chart" }],
  });
  await writeFile(join(root, "repo-ca.pem"), repo.caPem);
  platform = await startPlatformProcess({
    extraArgs: ["--cluster-heartbeat-seconds", "1"],
    env: { NODE_EXTRA_CA_CERTS: join(root, "repo-ca.pem") },
  });
  client = new AuthClient(platform.url, platform.caPem);
});

after(async () => {
  await rogue?.close();
  client?.close();
  await platform?.stop();
  await repo?.close();
  await rm(root, { recursive: true, force: true });
});

it("a cluster owner's own agent gets the chart it asks for, and never the repository's password", async () => {
  const admin = platform.adminKey;
  const config = await client.send("PATCH", `${API}/configs/platform-config`, {
    token: admin,
    body: {
      spec: {
        raw: `apps:\n  repositories:\n    - ${JSON.stringify({ name: "private", url: repo.url, username: "ci", password: PASSWORD })}\n`,
      },
    },
    contentType: "application/merge-patch+json",
  });
  assert.equal(config.status, 200, config.body);
  await client.createUser(admin, "mallory");
  const mallory = await client.createKey(admin, "key-mallory", { user: "mallory" });
  // Mallory cannot read the Config's secrets herself.
  const read = await client.send("GET", `${API}/configs/platform-config`, { token: mallory });
  assert.ok(read.status === 403 || !read.body.includes(PASSWORD), read.body);
  for (const body of [
    { kind: "Cluster", metadata: { name: "rogue" }, spec: { owner: { user: "mallory" } } },
    { kind: "Project", metadata: { name: "mine" }, spec: { members: [{ name: "mallory", clusterRole: "edit" }] } },
  ]) {
    const plural = body.kind === "Cluster" ? "clusters" : "projects";
    const created = await client.send("POST", `${MGMT}/${plural}`, { token: admin, body: { apiVersion: V1, ...body } });
    assert.equal(created.status, 201, created.body);
  }
  rogue = startScriptedAgent({
    platform,
    cluster: "rogue",
    accessKey: await mintAgentKey(client, mallory, "rogue"),
    answer: ({ path, body }) => {
      if (path.startsWith("/agent/v1/helmreleases/")) received.push(body);
      if (path === "/agent/v1/info") return { spaces: [], virtualClusters: [], helmVersion: "v3.8.1" };
      if (path.startsWith("/agent/v1/spaces/")) return { phase: "Ready" };
      if (!path.startsWith("/agent/v1/helmreleases/")) return { phase: "Off" };
      const request = JSON.parse(body);
      if (!request.archive) return { phase: "Pending", wantsChart: true };
      return { phase: "Deployed", generation: request.generation, revision: 1, chartVersion: request.version };
    },
  });
  await waitFor(
    async () =>
      (await client.send("GET", `${MGMT}/clusters/rogue`, { token: admin })).json().status?.helmVersion === "v3.8.1",
    "rogue reported its helm",
    120,
  );
  // Mallory, as a project member with edit, places a space on her own cluster and an app from "private" in it.
  const space = await client.send("POST", `${MGMT}/namespaces/p-mine/spaceinstances`, {
    token: mallory,
    body: {
      apiVersion: V1,
      kind: "SpaceInstance",
      metadata: { name: "s" },
      spec: { clusterRef: { cluster: "rogue" } },
    },
  });
  assert.equal(space.status, 201, space.body);
  const release = await client.send("POST", `${MGMT}/namespaces/p-mine/helmreleases`, {
    token: mallory,
    body: {
      apiVersion: V1,
      kind: "HelmRelease",
      metadata: { name: "grab" },
      spec: { chart: { repository: "private", name: "anything" }, target: { space: "s" } },
    },
  });
  assert.equal(release.status, 201, release.body);
  const status = async () =>
    (await client.send("GET", `${MGMT}/namespaces/p-mine/helmreleases/grab`, { token: mallory })).json().status;
  await waitFor(async () => (await status())?.phase === "Deployed", "the release deployed by the rogue agent", 120);
  const withChart = received.map((body) => JSON.parse(body)).find((request) => request.archive);
  assert.ok(withChart, "the agent received the chart it asked for");
  assert.equal(withChart.version, "1.0.0");
  assert.match(gunzipSync(Buffer.from(withChart.archive, "base64")).toString("latin1"), /the private chart/);
  const basic = Buffer.from(`ci:${PASSWORD}`).toString("base64");
  for (const body of received) {
    assert.ok(
      !body.includes(PASSWORD) && !body.includes(basic),
      `the platform sent the Config's repository credentials to an agent run by a non-admin: ${body.slice(0, 200)}`,
    );
  }
  assert.ok(
    repo.requests.every((request) => request.authorized),
    "every read of the repository was the platform's",
  );
});
