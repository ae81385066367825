// The agent's forwarder against a small HTTPS server standing in for a host that speaks upgrades (the stand-alone
// API server serves none): it sends the agent's own credential and the identity to impersonate, never the caller's
// credentials or impersonation headers, streams the answer, and switches protocols end to end when the host does.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { createServer, type Server } from "node:https";
import { connect as netConnect, createServer as netServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { ensureServingCertificates } from "../pki/tls.ts";
import { directAccess } from "../virtualcluster/kube/kube-access.ts";
import { type AnswerSink, HostForwarder } from "./host-forwarder.ts";

/** Two connected sockets: what the forwarder switches to, and the client's end of it. */
async function socketPair(): Promise<[Socket, Socket]> {
  const listener = netServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const accepted = new Promise<Socket>((resolve) => listener.once("connection", resolve));
  const client = netConnect((listener.address() as { port: number }).port, "127.0.0.1");
  const server = await accepted;
  listener.close();
  return [server, client];
}

function sink(switchTo?: Socket) {
  const body = new PassThrough();
  const got: { status?: number; headers?: OutgoingHttpHeaders; switched?: OutgoingHttpHeaders } = {};
  let text = "";
  body.on("data", (chunk) => {
    text += chunk;
  });
  const answer: AnswerSink = {
    respond: (status, headers) => {
      got.status = status;
      got.headers = headers;
    },
    switched: (headers) => {
      got.switched = headers;
      if (!switchTo) throw new Error("no upgrade expected");
      return switchTo;
    },
    body,
    onClose: () => {},
    headersSent: () => got.status !== undefined,
    abort: () => body.destroy(),
  };
  return { answer, got, text: () => text, ended: new Promise((resolve) => body.once("end", resolve)) };
}

describe("HostForwarder", () => {
  let dir: string;
  let host: Server;
  let url: string;
  let caPem: string;
  const seen: IncomingHttpHeaders[] = [];
  let connections = 0;
  /** Longer than the forwarder reads whole: it stops reading and asks again through https.request, which streams. */
  const HUGE = 2 * 1024 * 1024;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "forwarder-"));
    const tls = await ensureServingCertificates({ dataDir: dir, hosts: ["127.0.0.1"] });
    caPem = tls.caPem;
    host = createServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
      seen.push(request.headers);
      if (request.url?.endsWith("/huge")) {
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": HUGE });
        response.end(Buffer.alloc(HUGE, 0x61));
        return;
      }
      response.writeHead(200, { "content-type": "application/json", "x-host": "yes" });
      response.end(JSON.stringify({ path: request.url }));
    });
    host.on("secureConnection", () => {
      connections++;
    });
    host.on("upgrade", (request, socket) => {
      seen.push(request.headers);
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${request.headers.upgrade}\r\n\r\n`,
      );
      socket.on("data", (chunk: Buffer) => socket.write(chunk.toString("utf8").toUpperCase()));
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(host.address() as { port: number }).port}`;
  });
  after(async () => {
    host.closeAllConnections();
    await new Promise((resolve) => host.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const forwarder = () =>
    new HostForwarder(
      directAccess({ server: url, tls: { ca: caPem }, credential: { kind: "token", token: "agent-sa" } }),
    );

  it("forward() sends the agent's credential and the identity, never the caller's credentials", async () => {
    const { answer, got, text, ended } = sink();
    await forwarder().forward(
      {
        method: "GET",
        path: "/api/v1/namespaces?limit=1",
        headers: {
          authorization: "Bearer the-callers-key",
          cookie: "vcp_session=secret",
          "impersonate-user": "system:admin",
          "x-platform-user": "forged",
          accept: "application/json",
        },
        identity: { user: "platform:user:dev", groups: ["platform:team:a", "platform:team:b"] },
        body: Readable.from([]),
        hasBody: false,
      },
      answer,
    );
    await ended;
    assert.equal(got.status, 200);
    assert.equal(got.headers?.["x-host"], "yes");
    assert.deepEqual(JSON.parse(text()), { path: "/api/v1/namespaces?limit=1" });
    const sent = seen.at(-1)!;
    assert.equal(sent.authorization, "Bearer agent-sa");
    assert.equal(sent.cookie, undefined);
    assert.equal(sent["x-platform-user"], undefined);
    assert.equal(sent["impersonate-user"], "platform:user:dev", "the identity the platform named, not the caller's");
    assert.equal(sent["impersonate-group"], "platform:team:a, platform:team:b");
    assert.equal(sent.accept, "application/json");
  });

  const call = (path: string, headers: IncomingHttpHeaders = {}) => ({
    method: "GET",
    path,
    headers,
    identity: { user: "platform:user:dev", groups: ["platform:team:a"] },
    body: Readable.from([]),
    hasBody: false,
  });

  it("forward() relays GETs of one object whole, with the same credential and identity, on one kept-alive connection", async () => {
    const relay = forwarder();
    const before = connections;
    for (let i = 0; i < 3; i++) {
      const { answer, got, text, ended } = sink();
      await relay.forward(
        call(`/api/v1/namespaces/a/configmaps/c${i}`, { authorization: "Bearer the-callers-key", accept: "x/y" }),
        answer,
      );
      await ended;
      assert.equal(got.status, 200);
      assert.equal(got.headers?.["x-host"], "yes");
      assert.equal(got.headers?.["content-length"], Buffer.byteLength(text()));
      assert.deepEqual(JSON.parse(text()), { path: `/api/v1/namespaces/a/configmaps/c${i}` });
      const sent = seen.at(-1)!;
      assert.equal(sent.authorization, "Bearer agent-sa");
      assert.equal(sent["impersonate-user"], "platform:user:dev");
      assert.equal(sent["impersonate-group"], "platform:team:a");
      assert.equal(sent.accept, "x/y");
    }
    assert.equal(connections - before, 1, "the three GETs went over one connection");
    relay.close();
  });

  it("forward() asks again through https.request, and relays it all, when a GET of one object answers more than it reads whole", async () => {
    const { answer, got, ended } = sink();
    let bytes = 0;
    answer.body.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    const asked = seen.length;
    await forwarder().forward(call("/api/v1/namespaces/a/configmaps/huge"), answer);
    await ended;
    assert.equal(got.status, 200);
    assert.equal(bytes, HUGE);
    assert.equal(seen.length - asked, 2, "once whole (cut off at the bound), once streamed");
  });

  it("forward() refuses a path or header that would split the request, sending nothing, as https.request does", async () => {
    const asked = seen.length;
    for (const bad of [
      call("/api/v1/namespaces/a/configmaps/c HTTP/1.1\r\nimpersonate-user: system:admin\r\nx: y"),
      call("/api/v1/namespaces/a/configmaps/c", { accept: "x\r\nimpersonate-user: system:admin" }),
    ]) {
      await assert.rejects(forwarder().forward(bad, sink().answer), TypeError);
    }
    assert.equal(seen.length, asked, "the host saw no request");
  });

  it("forward() switches protocols end to end when the host does, and relays the bytes both ways", async () => {
    const [agentEnd, clientEnd] = await socketPair();
    const { answer, got } = sink(agentEnd);
    await forwarder().forward(
      {
        method: "GET",
        path: "/api/v1/namespaces/a/pods/p/exec",
        headers: {},
        identity: { user: "platform:user:dev", groups: [] },
        body: agentEnd,
        hasBody: false,
        upgrade: "SPDY/3.1",
      },
      answer,
    );
    const echoed = await new Promise<string>((resolve) => {
      clientEnd.once("data", (chunk) => resolve(chunk.toString("utf8")));
      clientEnd.write("hello");
    });
    assert.equal(echoed, "HELLO");
    assert.ok(got.switched, "the sink was told the host switched protocols");
    assert.equal(seen.at(-1)?.upgrade, "SPDY/3.1");
    assert.equal(seen.at(-1)?.["impersonate-user"], "platform:user:dev");
    clientEnd.destroy();
    agentEnd.destroy();
  });

  it("forward() answers 503 with a Status when the host cannot be reached", async () => {
    const { answer, got, text, ended } = sink();
    const nowhere = new HostForwarder(
      directAccess({ server: "https://127.0.0.1:1", tls: { ca: caPem }, credential: { kind: "token", token: "t" } }),
    );
    await nowhere.forward(
      {
        method: "GET",
        path: "/version",
        headers: {},
        identity: { user: "u", groups: [] },
        body: Readable.from([]),
        hasBody: false,
      },
      answer,
    );
    await ended;
    assert.equal(got.status, 503);
    assert.match(JSON.parse(text()).message, /the cluster's agent cannot reach its API server/);
  });

  it("forward() answers 503 with a Status when the host cannot be reached for a GET of one object", async () => {
    const { answer, got, text, ended } = sink();
    const nowhere = new HostForwarder(
      directAccess({ server: "https://127.0.0.1:1", tls: { ca: caPem }, credential: { kind: "token", token: "t" } }),
    );
    await nowhere.forward(call("/api/v1/namespaces/a/configmaps/c"), answer);
    await ended;
    assert.equal(got.status, 503);
    assert.match(JSON.parse(text()).message, /the cluster's agent cannot reach its API server/);
  });
});
