// The reverse tunnel over real HTTPS: our API server accepts an agent's upgrade through a passthrough route and sends
// requests over it; the "agent" here is the test, answering on the HTTP/2 server end of the dialled connection.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import type { ClientHttp2Session, ServerHttp2Session, ServerHttp2Stream } from "node:http2";
import { constants, connect as http2Connect, performServerHandshake } from "node:http2";
import { request as httpsRequest } from "node:https";
import { createServer, connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import type { Authenticator } from "../../auth/types.ts";
import { ensureServingCertificates } from "../../pki/tls.ts";
import { eventually } from "../../utils/testing-eventually.ts";
import { type RunningApiServer, startApiServer } from "../api-server.ts";
import type { PassthroughRoute } from "../passthrough.ts";
import { forwardRequest, forwardUpgrade } from "./tunnel-forward.ts";
import { GROUP_HEADER, UPGRADE_HEADER, UPGRADED_HEADER, USER_HEADER } from "./tunnel-protocol.ts";
import { acceptTunnel, dialTunnel, http2Transport, TunnelRefusedError } from "./tunnel-session.ts";

const tokens: Record<string, string> = { "agent-token": "agent", "user-token": "alice" };
const bearer: Authenticator = {
  authenticate: (request) => {
    const name = tokens[request.bearerToken ?? ""];
    return name ? { name, groups: ["devs", "ops"] } : undefined;
  },
};

interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
}

describe("reverse tunnel", () => {
  let dir: string;
  let server: RunningApiServer;
  let caPem: string;
  let platformSide: ClientHttp2Session | undefined;
  let agentSide: ServerHttp2Session;
  const seen: Seen[] = [];
  const cancelled: string[] = [];
  const opened: string[] = [];
  /** The late route's request has arrived; its forwarding's result. */
  let lateArrived: () => void = () => {};
  let lateForwarded: Promise<number> | undefined;

  /** What the test's agent answers on the tunnel. */
  function answer(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const path = String(headers[":path"]);
    if (headers[UPGRADE_HEADER]) {
      stream.respond({ ":status": 200, [UPGRADED_HEADER]: "101", "x-host": "yes" });
      stream.on("data", (chunk: Buffer) => stream.write(chunk.toString("utf8").toUpperCase()));
      stream.on("end", () => stream.end());
      return;
    }
    if (path === "/proxy/stream") {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      let sent = 0;
      const next = () => {
        if (stream.destroyed) return;
        stream.write(`{"event":${sent}}\n`);
        if (++sent === 3) stream.end();
      };
      next();
      // The next event only once the client said it saw the one before: proves nothing waits for the end.
      stream.on("data", () => {});
      tick = next;
      return;
    }
    if (path === "/proxy/late") {
      opened.push(path);
      stream.respond({ ":status": 204 });
      stream.end();
      return;
    }
    if (path === "/proxy/hang") {
      stream.respond({ ":status": 200 });
      stream.write("started\n");
      stream.once("close", () => cancelled.push(String(stream.rstCode)));
      return;
    }
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      seen.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
      stream.respond({
        ":status": 201,
        "content-type": "text/plain",
        "x-from": "agent",
        "set-cookie": "vcp_session=the-agents-own; Path=/",
        "content-security-policy": "script-src *",
      });
      stream.end(`${headers[":method"]} ${path} as ${headers[USER_HEADER]}`);
    });
  }
  let tick: () => void = () => {};

  const tunnelRoute: PassthroughRoute = {
    matches: (url) => url === "/tunnel",
    serve: async () => 404,
    async upgrade(call, socket, head) {
      if (call.user.name !== "agent") throw new Error("not the agent");
      platformSide = await acceptTunnel(socket, head, { "x-platform-tunnel-id": "t1" });
      return 101;
    },
  };
  const proxyRoute: PassthroughRoute = {
    matches: (url) => url.startsWith("/proxy/"),
    serve: (call, response) =>
      forwardRequest(
        platformSide!,
        {
          path: call.url,
          request: call.request,
          headers: { [USER_HEADER]: call.user.name, [GROUP_HEADER]: call.user.groups },
        },
        response,
      ),
    upgrade: (call, socket, head) =>
      forwardUpgrade(
        platformSide!,
        { path: call.url, request: call.request, headers: { [USER_HEADER]: call.user.name } },
        socket,
        head,
      ),
  };

  // Forwards only once its client has left (a loaded server that reached the route too late).
  const lateRoute: PassthroughRoute = {
    matches: (url) => url === "/late",
    serve(call, response) {
      lateForwarded = new Promise<void>((resolve) => response.once("close", resolve)).then(() =>
        forwardRequest(platformSide!, { path: "/proxy/late", request: call.request, headers: {} }, response),
      );
      lateArrived();
      return lateForwarded;
    },
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tunnel-test-"));
    const tls = await ensureServingCertificates({ dataDir: dir, hosts: ["127.0.0.1"] });
    caPem = tls.caPem ?? "";
    server = await startApiServer({
      resources: [],
      authenticators: [bearer],
      authorizer: { authorize: async () => ({ allowed: true }) },
      tls: { certPem: tls.certPem, keyPem: tls.keyPem },
      host: "127.0.0.1",
      port: 0,
      version: { major: "1", minor: "30", gitVersion: "v1.30.0" },
      passthrough: [tunnelRoute, proxyRoute, lateRoute],
    });
    const dialled = await dialTunnel({
      url: `${server.url}/tunnel`,
      ca: caPem,
      token: "agent-token",
      timeoutMs: 10_000,
    });
    agentSide = dialled.session;
    assert.equal(dialled.headers["x-platform-tunnel-id"], "t1");
    agentSide.on("stream", answer);
  });
  after(async () => {
    agentSide?.destroy();
    platformSide?.destroy();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** One HTTPS request to the platform; resolves with status, headers and body. */
  function call(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      const request = httpsRequest(`${server.url}${path}`, { method, ca: caPem, headers }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      });
      request.on("error", reject);
      request.end(body);
    });
  }

  it("dialTunnel() is refused with the platform's Status message when the credentials are not an agent's", async () => {
    const error = await dialTunnel({ url: `${server.url}/tunnel`, ca: caPem, token: "nobody", timeoutMs: 10_000 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof TunnelRefusedError, String(error));
    assert.equal(error.code, 401);
  });

  it("forwardRequest() relays method, path, body and the caller's identity; never the client's credentials nor the agent's cookies", async () => {
    const reply = await call(
      "POST",
      "/proxy/api/v1/namespaces/a/configmaps?dryRun=All",
      {
        authorization: "Bearer user-token",
        cookie: "vcp_session=secret",
        "x-platform-user": "forged",
        "content-type": "application/json",
      },
      '{"kind":"ConfigMap"}',
    );
    assert.equal(reply.status, 201, reply.body);
    assert.equal(reply.body, "POST /proxy/api/v1/namespaces/a/configmaps?dryRun=All as alice");
    assert.equal(reply.headers["x-from"], "agent");
    assert.equal(reply.headers["set-cookie"], undefined, "an agent sets no cookie on the platform's origin");
    assert.equal(reply.headers["x-content-type-options"], "nosniff");
    assert.equal(reply.headers["content-security-policy"], "sandbox", "the agent's own policy is not kept");
    const last = seen.at(-1)!;
    assert.equal(last.body, '{"kind":"ConfigMap"}');
    assert.equal(last.headers.authorization, undefined);
    assert.equal(last.headers.cookie, undefined);
    assert.equal(last.headers[USER_HEADER], "alice", "the platform's identity, not the client's header");
    assert.deepEqual(String(last.headers[GROUP_HEADER]).split(/,\s*/), ["devs", "ops"]);
    assert.equal(last.headers["content-type"], "application/json");
  });

  it("forwardRequest() answers 401 without credentials and never reaches the agent", async () => {
    const before = seen.length;
    const reply = await call("GET", "/proxy/api/v1/namespaces");
    assert.equal(reply.status, 401);
    assert.equal(JSON.parse(reply.body).kind, "Status");
    assert.equal(seen.length, before);
  });

  it("forwardRequest() streams: each chunk reaches the client before the answer ends", async () => {
    const events: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const request = httpsRequest(
        `${server.url}/proxy/stream`,
        { ca: caPem, headers: { authorization: "Bearer user-token" } },
        (response) => {
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            events.push(...chunk.split("\n").filter(Boolean));
            tick();
          });
          response.on("end", resolve);
        },
      );
      request.on("error", reject);
      request.end();
    });
    assert.deepEqual(events, ['{"event":0}', '{"event":1}', '{"event":2}']);
  });

  it("forwardRequest() cancels the agent's stream when the client leaves", async () => {
    await new Promise<void>((resolve, reject) => {
      const request = httpsRequest(
        `${server.url}/proxy/hang`,
        { ca: caPem, headers: { authorization: "Bearer user-token" } },
        (response) => {
          response.once("data", () => {
            request.destroy();
            resolve();
          });
        },
      );
      request.on("error", () => {});
      request.once("error", reject);
      request.end();
    });
    await eventually(() => cancelled.length === 1, "the cancelled stream");
    assert.equal(cancelled[0], String(constants.NGHTTP2_CANCEL));
  });

  it("forwardRequest() opens no stream for a client that left before the route began", async () => {
    const arrived = new Promise<void>((resolve) => {
      lateArrived = resolve;
    });
    const request = httpsRequest(`${server.url}/late`, { ca: caPem, headers: { authorization: "Bearer user-token" } });
    request.on("error", () => {});
    request.end();
    await arrived;
    request.destroy();
    assert.equal(await lateForwarded, 499);
    // Streams reach the agent in the order they were opened: once a later one is answered, a stream for the late
    // request would have arrived before it.
    assert.equal((await call("POST", "/proxy/after", { authorization: "Bearer user-token" }, "x")).status, 201);
    assert.deepEqual(opened, []);
  });

  it("forwardUpgrade() switches protocols end to end and relays the bytes both ways", async () => {
    const port = new URL(server.url).port;
    const socket = tlsConnect({ host: "127.0.0.1", port: Number(port), ca: caPem, servername: "127.0.0.1" });
    socket.write(
      "GET /proxy/api/v1/namespaces/a/pods/p/exec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer user-token\r\n" +
        "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n",
    );
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received.includes("\r\n\r\n") && !received.includes("HELLO")) socket.write("hello");
    });
    await eventually(() => received.includes("HELLO"), "the bytes through the upgrade");
    assert.match(received, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(received, /\r\nupgrade: SPDY\/3\.1\r\n/i);
    assert.match(received, /\r\nx-host: yes\r\n/);
    socket.destroy();
  });

  it("http2Transport() puts bytes already read back in front of the socket", async () => {
    // The client's preface is read here first, as an upgrade's head would be, then HTTP/2 gets the rest.
    const listener = createServer((socket) => {
      socket.once("data", (head: Buffer) => {
        socket.pause();
        const session = performServerHandshake(http2Transport(socket, head));
        session.on("stream", (stream) => {
          stream.respond({ ":status": 200 });
          stream.end("through");
        });
      });
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const { port } = listener.address() as { port: number };
    const client = http2Connect(`http://127.0.0.1:${port}`, { createConnection: () => netConnect(port, "127.0.0.1") });
    const body = await new Promise<string>((resolve, reject) => {
      const stream = client.request({ ":path": "/" });
      let text = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk) => {
        text += chunk;
      });
      stream.on("end", () => resolve(text));
      stream.on("error", reject);
    });
    assert.equal(body, "through");
    client.destroy();
    listener.close();
  });
});
