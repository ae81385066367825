// A connected cluster's agent as the attacker: whoever owns a Cluster can mint its agent key and run an agent of their
// own, and what that agent answers (GET /agent/v1/info at every heartbeat, the state of each space it keeps) would go
// into the Cluster's and the SpaceInstance's status, rewritten on every heartbeat and sent to every reader of them
// (the cluster's users, platform viewers, the console's lists), bounded only by callAgent's 1 MiB per answer: a
// Kubernetes or agent version of 900 KB, a direct endpoint that is not https:// (users' kubeconfigs are made from it),
// 50,000 spaces, a message of 900 KB. Safe behaviour asserted: the platform keeps short versions only, a direct
// endpoint only when it is https:// with a PEM CA (and forgets one the agent stops reporting), at most 10,000 short
// names per list, usage numbers only when finite, messages of at most 1024 characters, and a phase it does not know
// as Failed saying so (src/http/tunnel/agent-answers.ts).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { TunnelClient } from "../src/agent/tunnel-client.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { mintAgentKey, startScriptedAgent } from "./support/scripted-agent.ts";
import { testTls } from "./support/test-ca.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const HUGE = `v1.30.0-${"x".repeat(900_000)}`;
const HUGE_MESSAGE = `helm says: ${"m".repeat(900_000)}`;

let platform: PlatformProcess;
let client: AuthClient;
let admin: string;
let rogue: TunnelClient | undefined;
let heartbeats = 0;
/** What the rogue agent answers GET /agent/v1/info with now, as JSON text. */
let info = "";

before(async () => {
  platform = await startPlatformProcess({ extraArgs: ["--cluster-heartbeat-seconds", "1"] });
  client = new AuthClient(platform.url, platform.caPem);
  admin = platform.adminKey;
});

after(async () => {
  await rogue?.close();
  client?.close();
  await platform?.stop();
});

const cluster = async () => (await client.send("GET", `${MGMT}/clusters/rogue`, { token: admin })).json();
const status = async () => (await cluster()).status;

/** The rogue agent answers `body` from now on; resolves once a heartbeat recorded `marker` as its agent version. */
async function answerInfo(body: Record<string, unknown> | string, marker: string): Promise<void> {
  info = typeof body === "string" ? body : JSON.stringify(body);
  const since = heartbeats;
  // Recorded (online with the marker) or refused: either way a verdict after a few heartbeats.
  await waitFor(
    async () => (await status())?.agentVersion === marker || heartbeats >= since + 5,
    `heartbeat ${marker} recorded`,
    120,
  );
}

describe("what a Cluster owner's own agent reports", () => {
  before(async () => {
    await client.createUser(admin, "mallory");
    const mallory = await client.createKey(admin, "key-mallory", { user: "mallory" });
    const created = await client.send("POST", `${MGMT}/clusters`, {
      token: admin,
      body: { apiVersion: V1, kind: "Cluster", metadata: { name: "rogue" }, spec: { owner: { user: "mallory" } } },
    });
    assert.equal(created.status, 201, created.body);
    info = JSON.stringify({ kubernetesVersion: "v1.30.0", agentVersion: "start", spaces: [], virtualClusters: [] });
    rogue = startScriptedAgent({
      platform,
      cluster: "rogue",
      accessKey: await mintAgentKey(client, mallory, "rogue"),
      answer: ({ path }) => {
        if (path === "/agent/v1/info") {
          heartbeats++;
          return info;
        }
        // Spaces: "odd" in a phase the platform does not know, any other Ready with a message of 900 KB.
        if (path.startsWith("/agent/v1/spaces/odd")) return { phase: "Exploded", message: HUGE_MESSAGE };
        if (path.startsWith("/agent/v1/spaces/")) return { phase: "Ready", message: HUGE_MESSAGE };
        return { phase: "Off" };
      },
    });
    await waitFor(async () => (await status())?.agentVersion === "start", "the rogue agent is online", 120);
  });

  it("an agent cannot store an unbounded Kubernetes version in its Cluster's status", async () => {
    await answerInfo({ kubernetesVersion: HUGE, agentVersion: "x", spaces: [], virtualClusters: [] }, "x");
    const version: string = (await status())?.kubernetesVersion ?? "";
    assert.ok(
      version.length <= 64,
      `the Cluster's status holds a Kubernetes version of ${version.length} characters from the agent`,
    );
  });

  it("an agent cannot store an unbounded agent or helm version in its Cluster's status", async () => {
    // Both in one answer of less than 1 MiB, which callAgent would refuse whole.
    const half = HUGE.slice(0, 450_000);
    info = JSON.stringify({ kubernetesVersion: "v1.30.1", agentVersion: half, helmVersion: half, spaces: [] });
    const since = heartbeats;
    await waitFor(
      async () => (await status())?.kubernetesVersion === "v1.30.1" || heartbeats >= since + 5,
      "heartbeat recorded",
      120,
    );
    const now = await status();
    assert.equal(now?.kubernetesVersion, "v1.30.1", "the heartbeat was recorded");
    const agentVersion: string = now?.agentVersion ?? "";
    const helmVersion: string = now?.helmVersion ?? "";
    assert.ok(agentVersion.length <= 64, `the status holds an agent version of ${agentVersion.length} characters`);
    assert.ok(helmVersion.length <= 64, `the status holds a helm version of ${helmVersion.length} characters`);
  });

  it("an agent's direct endpoint is kept only as an https:// URL with a PEM CA, and goes when it is not", async () => {
    const { caPem } = await testTls("rogue direct endpoint");
    const https = { url: "https://127.0.0.1:8444", certificateAuthority: caPem };
    await answerInfo(
      { agentVersion: "direct-https", directEndpoint: https, spaces: [], virtualClusters: [] },
      "direct-https",
    );
    assert.deepEqual((await status())?.directEndpoint, https, "a well-formed direct endpoint is recorded");

    const http = { url: "http://127.0.0.1:8444", certificateAuthority: caPem };
    await answerInfo(
      { agentVersion: "direct-http", directEndpoint: http, spaces: [], virtualClusters: [] },
      "direct-http",
    );
    assert.equal((await status())?.agentVersion, "direct-http", "the heartbeat was recorded");
    assert.equal((await status())?.directEndpoint, undefined, "an http:// direct endpoint is neither stored nor kept");

    for (const [marker, endpoint] of [
      ["direct-huge-ca", { url: https.url, certificateAuthority: `${caPem}${"A".repeat(900_000)}` }],
      ["direct-not-pem", { url: https.url, certificateAuthority: "not a certificate" }],
      ["direct-huge-url", { url: `https://127.0.0.1:8444/${"p".repeat(900_000)}`, certificateAuthority: caPem }],
      ["direct-not-url", { url: "https://[::1", certificateAuthority: caPem }],
    ] as const) {
      await answerInfo({ agentVersion: marker, directEndpoint: endpoint, spaces: [], virtualClusters: [] }, marker);
      assert.equal((await status())?.agentVersion, marker, "the heartbeat was recorded");
      assert.equal((await status())?.directEndpoint, undefined, marker);
    }
  });

  it("an agent cannot store an unbounded list of spaces or virtual clusters, nor numbers that are not finite", async () => {
    const spaces = Array.from({ length: 50_000 }, (_, i) => `p/s${i}`);
    const virtualClusters = Array.from({ length: 300 }, (_, i) => `p/${"v".repeat(1000)}${i}`);
    // 1e999 is JSON for a number JSON.parse reads as Infinity.
    const body = JSON.stringify({
      agentVersion: "lists",
      spaces,
      virtualClusters,
      usage: { cpuSeconds: "INFINITY", residentMemoryBytes: 1, apiRequests: 1 },
    }).replace('"INFINITY"', "1e999");
    assert.ok(Buffer.byteLength(body) < 1024 * 1024, "the answer fits callAgent's 1 MiB");
    await answerInfo(body, "lists");
    const reply = await client.send("GET", `${MGMT}/clusters/rogue`, { token: admin });
    const now = reply.json().status;
    assert.equal(now?.agentVersion, "lists", "the heartbeat was recorded");
    assert.ok(now.spaces.length <= 10_000, `the status lists ${now.spaces.length} spaces`);
    assert.ok(
      now.spaces.every((s: string) => s.length <= 253),
      "every space listed is a short name",
    );
    assert.deepEqual(now.virtualClusters, [], "names longer than 253 characters are not kept");
    assert.equal(now.usage, undefined, "usage with a number that is not finite is not kept");
    assert.ok(reply.body.length < 256 * 1024, `the Cluster is ${reply.body.length} bytes`);
  });

  it("an agent cannot store an unbounded message or an unknown phase in a space's status", async () => {
    await answerInfo({ agentVersion: "spaces", spaces: ["shop/dev", "shop/odd"], virtualClusters: [] }, "spaces");
    const project = await client.send("POST", `${MGMT}/projects`, {
      token: admin,
      body: { apiVersion: V1, kind: "Project", metadata: { name: "shop" } },
    });
    assert.equal(project.status, 201, project.body);
    for (const name of ["dev", "odd"]) {
      const created = await client.send("POST", `${MGMT}/namespaces/p-shop/spaceinstances`, {
        token: admin,
        body: { apiVersion: V1, kind: "SpaceInstance", metadata: { name }, spec: { clusterRef: { cluster: "rogue" } } },
      });
      assert.equal(created.status, 201, created.body);
    }
    const space = async (name: string) =>
      (await client.send("GET", `${MGMT}/namespaces/p-shop/spaceinstances/${name}`, { token: admin })).json().status;
    await waitFor(async () => (await space("dev"))?.phase === "Ready", "the space dev is Ready", 120);
    const dev: string = (await space("dev"))?.message ?? "";
    assert.ok(dev.length <= 1024, `the space's status holds a message of ${dev.length} characters from the agent`);
    assert.ok(dev.startsWith("helm says: mmm") && dev.endsWith("…"), "the message is cut with an ellipsis");

    await waitFor(async () => (await space("odd"))?.phase === "Failed", "the space odd Failed", 120);
    const odd = await space("odd");
    assert.match(
      odd.message,
      /^the agent answered a workload state the platform does not understand \(phase "Exploded"\)/,
    );
    assert.ok(odd.message.length <= 1024, `the space's status holds a message of ${odd.message.length} characters`);
  });
});
