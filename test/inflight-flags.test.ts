// The in-flight flags of the two commands that serve an API, on real processes: `virtualcluster apiserver` and
// `virtualcluster platform start` with --max-mutating-requests-inflight 1 answer a second write 429 (Retry-After,
// a Status) while a first one, whose body is still on its way, holds the slot; the slot comes back once it is done.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { AuthClient } from "./support/auth-client.ts";
import { startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { type Reply, send } from "./support/https-json.ts";
import { startPlatformProcess } from "./support/platform-process.ts";

interface Server {
  url: string;
  caPem: string;
}

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

/** Sends the request until the server refuses it for the slot held (the slow create may take a moment to arrive). */
async function until429(attempt: () => Promise<Reply>): Promise<Reply> {
  for (;;) {
    const reply = await attempt();
    if (reply.status === 429) return reply;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function assertTooManyRequests(reply: Reply): void {
  assert.equal(reply.status, 429);
  assert.equal(reply.headers["retry-after"], "1");
  const status = reply.json();
  assert.equal(status.kind, "Status");
  assert.equal(status.reason, "TooManyRequests");
  assert.equal(status.details.retryAfterSeconds, 1);
}

describe("--max-mutating-requests-inflight", () => {
  it("virtualcluster apiserver --max-mutating-requests-inflight 1 refuses a second write while one is in flight", async () => {
    const server = await startClusterApiServerProcess({ extraArgs: ["--max-mutating-requests-inflight", "1"] });
    const client = new AuthClient(server.url, server.caPem);
    try {
      const token = (await readFile(join(server.dataDir, "admin-token"), "utf8")).trim();
      const configMaps = "/api/v1/namespaces/default/configmaps";
      const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } });
      const slow = await startSlowCreate(server, configMaps, token, JSON.stringify(configMap("held")));

      assertTooManyRequests(await until429(() => client.send("POST", configMaps, { token, body: configMap("b") })));
      assert.equal((await client.send("GET", configMaps, { token })).status, 200, "reads have their own limit");
      const metrics = (await client.send("GET", "/metrics", { token })).body;
      assert.match(metrics, /apiserver_current_inflight_requests\{request_kind="mutating"\} 1\n/);
      assert.match(metrics, /apiserver_dropped_requests_total\{request_kind="mutating"\} [1-9]/);

      assert.match(await slow.finish(), /^HTTP\/1.1 201 Created\r\n/);
      assert.equal((await client.send("POST", configMaps, { token, body: configMap("b") })).status, 201);
    } finally {
      client.agent.destroy();
      await server.stop();
    }
  });

  it("virtualcluster platform start --max-mutating-requests-inflight 1 refuses a second write while one is in flight", async () => {
    const platform = await startPlatformProcess({
      extraArgs: ["--max-requests-inflight", "50", "--max-mutating-requests-inflight", "1"],
    });
    try {
      const users = "/apis/management.platform.sh/v1/users";
      const user = (name: string) => ({
        apiVersion: "management.platform.sh/v1",
        kind: "User",
        metadata: { name },
        spec: { username: name },
      });
      const token = platform.adminKey;
      const slow = await startSlowCreate(platform, users, token, JSON.stringify(user("held")));

      assertTooManyRequests(await until429(() => send(platform, "POST", users, { token, body: user("second") })));
      assert.equal((await send(platform, "GET", users, { token })).status, 200);

      assert.match(await slow.finish(), /^HTTP\/1.1 201 Created\r\n/);
      assert.equal((await send(platform, "POST", users, { token, body: user("second") })).status, 201);
    } finally {
      await platform.stop();
    }
  });
});
