// A Cluster owner's own agent used as a lever: it opens and drops its tunnel in a loop. Each open used to make the
// platform look at every HelmRelease of every cluster again, queued without bound, so another cluster's agent was
// asked to install its unchanged apps once per reconnect. Now an open looks only at its own cluster's objects, a
// key's work is queued at most once, and a cluster's tunnel opens only so often (429 with Retry-After after that).
// An agent slow to answer its heartbeats has one in flight at a time, not one more per interval.

import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type { TunnelClient } from "../src/agent/tunnel-client.ts";
import { dialTunnel, TunnelRefusedError } from "../src/http/tunnel/tunnel-session.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { mintAgentKey, startScriptedAgent } from "./support/scripted-agent.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const RECONNECTS = 40;

let platform: PlatformProcess;
let client: AuthClient;
let edge: TunnelClient | undefined;
let slow: TunnelClient | undefined;

before(async () => {
  platform = await startPlatformProcess({ extraArgs: ["--cluster-heartbeat-seconds", "1"] });
  client = new AuthClient(platform.url, platform.caPem);
});

after(async () => {
  await edge?.close();
  await slow?.close();
  client?.close();
  await platform?.stop();
});

it("another cluster's agent reconnecting in a loop is slowed down and makes no work for edge", async () => {
  const admin = platform.adminKey;
  const config = await client.send("PATCH", `${API}/configs/platform-config`, {
    token: admin,
    body: { spec: { raw: `apps:\n  repositories:\n    - {"name":"charts","url":"https://charts.example.invalid"}\n` } },
    contentType: "application/merge-patch+json",
  });
  assert.equal(config.status, 200, config.body);
  await client.createUser(admin, "mallory");
  const mallory = await client.createKey(admin, "key-mallory", { user: "mallory" });
  for (const body of [
    { kind: "Cluster", metadata: { name: "edge" }, spec: {} },
    { kind: "Cluster", metadata: { name: "rogue" }, spec: { owner: { user: "mallory" } } },
    { kind: "Project", metadata: { name: "shop" }, spec: {} },
  ]) {
    const plural = body.kind === "Cluster" ? "clusters" : "projects";
    const created = await client.send("POST", `${MGMT}/${plural}`, { token: admin, body: { apiVersion: V1, ...body } });
    assert.equal(created.status, 201, created.body);
  }
  // edge: a well-behaved agent with helm that installs at once.
  let puts = 0;
  edge = startScriptedAgent({
    platform,
    cluster: "edge",
    accessKey: await mintAgentKey(client, admin, "edge"),
    answer: ({ method, path, body }) => {
      if (path === "/agent/v1/info") return { spaces: [], virtualClusters: [], helmVersion: "v3.8.1" };
      if (path.startsWith("/agent/v1/spaces/")) return { phase: "Ready" };
      if (!(path.startsWith("/agent/v1/helmreleases/") && method === "PUT")) return { phase: "Off" };
      puts++;
      return { phase: "Deployed", generation: JSON.parse(body).generation, revision: 1, chartVersion: "0.1.0" };
    },
  });
  const get = async (path: string) => (await client.send("GET", `${MGMT}/${path}`, { token: admin })).json();
  await waitFor(async () => (await get("clusters/edge")).status?.helmVersion === "v3.8.1", "edge's helm", 120);
  for (const [plural, body] of [
    ["spaceinstances", { kind: "SpaceInstance", metadata: { name: "s" }, spec: { clusterRef: { cluster: "edge" } } }],
    [
      "helmreleases",
      {
        kind: "HelmRelease",
        metadata: { name: "app" },
        spec: { chart: { repository: "charts", name: "demo" }, target: { space: "s" } },
      },
    ],
  ] as const) {
    const created = await client.send("POST", `${MGMT}/namespaces/p-shop/${plural}`, {
      token: admin,
      body: { apiVersion: V1, ...body },
    });
    assert.equal(created.status, 201, created.body);
  }
  await waitFor(
    async () => (await get("namespaces/p-shop/helmreleases/app")).status?.phase === "Deployed",
    "edge's app deployed",
    120,
  );
  const before = puts;

  // mallory's agent key, and a tunnel opened and dropped RECONNECTS times in a row.
  const rogueKey = await mintAgentKey(client, mallory, "rogue");
  let opened = 0;
  const refusals: number[] = [];
  for (let i = 0; i < RECONNECTS; i++) {
    try {
      const { session } = await dialTunnel({
        url: `${platform.url}/cluster-agent/rogue/tunnel`,
        ca: platform.caPem,
        token: rogueKey,
        timeoutMs: 15_000,
      });
      opened++;
      session.destroy();
    } catch (error) {
      if (!(error instanceof TunnelRefusedError)) throw error;
      refusals.push(error.code);
    }
  }
  assert.ok(opened >= 1 && opened < RECONNECTS, `${opened} of ${RECONNECTS} opens in a row were let in`);
  assert.deepEqual(new Set(refusals), new Set([429]), "the others were told to wait");
  // A change of edge's release: its reconcile runs after any work the reconnects queued for it.
  const patched = await client.send("PATCH", `${MGMT}/namespaces/p-shop/helmreleases/app`, {
    token: admin,
    body: { spec: { values: "changed: true\n" } },
    contentType: "application/merge-patch+json",
  });
  assert.equal(patched.status, 200, patched.body);
  await waitFor(
    async () => (await get("namespaces/p-shop/helmreleases/app")).status?.observedGeneration === 2,
    "edge's change deployed",
    120,
  );
  assert.ok(
    puts - before <= 3,
    `${opened} reconnects of mallory's agent and one change made the platform call edge's agent ${puts - before} times`,
  );
});

it("an agent that holds its heartbeat's answer has one heartbeat in flight, not one more per interval", async () => {
  const admin = platform.adminKey;
  const created = await client.send("POST", `${MGMT}/clusters`, {
    token: admin,
    body: { apiVersion: V1, kind: "Cluster", metadata: { name: "slow" }, spec: {} },
  });
  assert.equal(created.status, 201, created.body);
  let connects = 0;
  let answered = 0;
  let held = 0;
  let mostHeld = 0;
  slow = startScriptedAgent({
    platform,
    cluster: "slow",
    accessKey: await mintAgentKey(client, admin, "slow"),
    connected: () => connects++,
    answer: ({ path }) => {
      if (path !== "/agent/v1/info") return { phase: "Off" };
      // The first tunnel's first heartbeat is answered, its later ones held until the platform gives up on it.
      if (answered++ === 0 || connects >= 2) return { spaces: [], virtualClusters: [], agentVersion: "slow" };
      mostHeld = Math.max(mostHeld, ++held);
      return new Promise(() => {});
    },
  });
  // The platform closes a tunnel whose heartbeat went unanswered for its deadline; the agent then dials again.
  await waitFor(async () => connects >= 2, "the platform gave up on the held heartbeat", 120);
  assert.equal(mostHeld, 1, `${mostHeld} heartbeats were held at once`);
});
