// The server-limit flags of the two commands that serve an API, on real processes.
// In-flight flags (the seats of flow control): `virtualcluster apiserver` and `virtualcluster platform start` with
// --max-mutating-requests-inflight 1 hold a user's next writes in his queue while a first one, whose body is still
// on its way, holds the seat; past his queue (50) he gets 429 with Retry-After while an admin is still served; once
// the seat is free the queued writes are carried out.
// Connection caps: with --max-connections-per-client, one address holding idle TLS connections is refused more at
// accept, while /readyz and an admin from another address (127.0.0.2) still get in.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { connect as netConnect } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { AuthClient } from "./support/auth-client.ts";
import { startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import type { Reply } from "./support/https-json.ts";
import { startPlatformProcess } from "./support/platform-process.ts";

interface Server {
  url: string;
  caPem: string;
}

const QUEUE_LENGTH = 50;

/** A create whose body stops after its first byte, so it stays in flight; finish() sends the rest. */
async function startSlowCreate(server: Server, path: string, token: string, body: string) {
  const { hostname, port } = new URL(server.url);
  const socket: TLSSocket = tlsConnect({ host: hostname, port: Number(port), ca: server.caPem });
  let answer = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    answer += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", () => resolve());
    socket.once("error", reject);
  });
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${server.url.slice(8)}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body[0]}`,
  );
  return {
    async finish(): Promise<string> {
      socket.write(body.slice(1));
      while (!answer.includes("\r\n\r\n")) await new Promise((resolve) => setTimeout(resolve, 10));
      socket.destroy();
      return answer;
    },
  };
}

function assertTooManyRequests(reply: Reply): void {
  assert.equal(reply.status, 429, reply.body);
  assert.equal(reply.headers["retry-after"], "1");
  const status = reply.json();
  assert.equal(status.kind, "Status");
  assert.equal(status.reason, "TooManyRequests");
  assert.equal(status.details.retryAfterSeconds, 1);
}

/** The value of one series in the Prometheus text. */
function metricValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * The user's writes past the held seat wait in his queue; past QUEUE_LENGTH he gets 429 while the admin is served;
 * once the held write completes, every queued one is carried out.
 */
async function queueThenRefuse(options: {
  server: Server;
  client: AuthClient;
  admin: string;
  user: string;
  path: string;
  object: (name: string) => Record<string, unknown>;
}): Promise<void> {
  const { server, client, admin, user, path, object } = options;
  const slow = await startSlowCreate(server, path, user, JSON.stringify(object("held")));
  const metrics = async () => (await client.send("GET", "/metrics", { token: admin })).body;
  const inflight = 'apiserver_current_inflight_requests{request_kind="mutating"}';
  while (metricValue(await metrics(), inflight) !== 1) await new Promise((resolve) => setTimeout(resolve, 20));
  // Every one of them on its own connection, so all reach the server at once.
  const flood = new AuthClient(server.url, server.caPem, { maxSockets: QUEUE_LENGTH + 1 });
  const queued = Array.from({ length: QUEUE_LENGTH }, (_, i) =>
    flood.send("POST", path, { token: user, body: object(`queued-${i}`) }),
  );
  const waiting =
    'apiserver_flowcontrol_current_inqueue_requests{priority_level="workload",flow_schema="authenticated"}';
  while (metricValue(await metrics(), waiting) !== QUEUE_LENGTH) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assertTooManyRequests(await client.send("POST", path, { token: user, body: object("refused") }));
  assert.equal((await client.send("GET", path, { token: admin })).status, 200, "the admin is exempt");
  assert.match(await slow.finish(), /^HTTP\/1.1 201 Created\r\n/);
  for (const reply of await Promise.all(queued)) assert.equal(reply.status, 201, reply.body);
  flood.close();
  const after = await metrics();
  assert.equal(metricValue(after, inflight), 0);
  assert.equal(metricValue(after, 'apiserver_dropped_requests_total{request_kind="mutating"}'), 1);
}

describe("--max-mutating-requests-inflight", () => {
  it("virtualcluster apiserver --max-mutating-requests-inflight 1 queues a user's writes behind one in flight, then refuses past his queue", async () => {
    const server = await startClusterApiServerProcess({ extraArgs: ["--max-mutating-requests-inflight", "1"] });
    const client = new AuthClient(server.url, server.caPem);
    try {
      const admin = (await readFile(join(server.dataDir, "admin-token"), "utf8")).trim();
      const user = await serviceAccountToken(client, admin);
      await queueThenRefuse({
        server,
        client,
        admin,
        user,
        path: "/api/v1/namespaces/default/configmaps",
        object: (name) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } }),
      });
    } finally {
      client.agent.destroy();
      await server.stop();
    }
  });

  it("virtualcluster platform start --max-mutating-requests-inflight 1 queues a user's writes behind one in flight, then refuses past his queue", async () => {
    const platform = await startPlatformProcess({
      extraArgs: ["--max-requests-inflight", "50", "--max-mutating-requests-inflight", "1"],
    });
    const client = new AuthClient(platform.url, platform.caPem);
    try {
      await client.createUser(platform.adminKey, "bob");
      const bob = await client.createKey(platform.adminKey, "bob-main", { user: "bob" });
      await queueThenRefuse({
        server: platform,
        client,
        admin: platform.adminKey,
        user: bob,
        path: "/apis/management.platform.sh/v1/ownedaccesskeys",
        object: (name) => ({
          apiVersion: "management.platform.sh/v1",
          kind: "OwnedAccessKey",
          metadata: { name },
          spec: { displayName: name },
        }),
      });
    } finally {
      client.agent.destroy();
      await platform.stop();
    }
  });
});

describe("--max-connections-per-client", () => {
  it("virtualcluster platform start --max-connections-per-client 20: one address's idle TLS connections past 20 are refused; /readyz and an admin from another still get in", async () => {
    const platform = await startPlatformProcess({ extraArgs: ["--max-connections-per-client", "20"] });
    const { port } = new URL(platform.url);
    const held: TLSSocket[] = [];
    /** An idle TLS connection from `from`; false when the server closed it before the handshake. */
    const idle = (from: string) =>
      new Promise<boolean>((resolve) => {
        const tcp = netConnect({ host: "127.0.0.1", port: Number(port), localAddress: from });
        const socket = tlsConnect({ socket: tcp, ca: platform.caPem, servername: "127.0.0.1" });
        held.push(socket);
        socket.on("error", () => {});
        socket.once("secureConnect", () => resolve(true));
        socket.once("close", () => resolve(false));
      });
    const get = (from: string, path: string, token?: string) =>
      new Promise<number>((resolve, reject) => {
        const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
        const req = httpsRequest(
          `${platform.url}${path}`,
          { ca: platform.caPem, headers, agent: false, localAddress: from },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end();
      });
    try {
      for (let i = 0; i < 20; i++) assert.equal(await idle("127.0.0.1"), true, `connection ${i}`);
      assert.equal(await idle("127.0.0.1"), false, "the 21st from the same address is closed at accept");
      assert.equal(await get("127.0.0.2", "/readyz"), 200);
      assert.equal(await get("127.0.0.2", "/apis/management.platform.sh/v1/users", platform.adminKey), 200);
    } finally {
      for (const socket of held) socket.destroy();
      await platform.stop();
    }
  });
});

/** A ServiceAccount that may write ConfigMaps, and a token for it (TokenRequest, as the admin). */
async function serviceAccountToken(client: AuthClient, admin: string): Promise<string> {
  const post = async (path: string, body: Record<string, unknown>) => {
    const reply = await client.send("POST", path, { token: admin, body });
    assert.ok(reply.status === 201 || reply.status === 200, `${path}: ${reply.status} ${reply.body}`);
    return reply.json();
  };
  await post("/api/v1/namespaces/default/serviceaccounts", {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "writer" },
  });
  await post("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "configmap-writer" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create", "get", "list"] }],
  });
  await post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "writer" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "configmap-writer" },
    subjects: [{ kind: "ServiceAccount", name: "writer", namespace: "default" }],
  });
  const request = await post("/api/v1/namespaces/default/serviceaccounts/writer/token", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600 },
  });
  return request.status.token;
}
