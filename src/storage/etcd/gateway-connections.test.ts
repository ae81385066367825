import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { eventually } from "../../utils/testing-eventually.ts";
import { AnswerReader, GatewayConnections } from "./gateway-connections.ts";

// A plain node:http server stands in for a member's gateway: what these tests check is HTTP/1.1 on the wire
// (keep-alive, chunks, lengths, closes), which the real etcd tests (etcd-store.test.ts) exercise only as it comes.
let server: http.Server;
let url: URL;
let connections = 0;
const hold: (() => void)[] = [];
/** The paths of the calls the server got and never answers (/never...). */
const unanswered: string[] = [];

before(async () => {
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const answer = JSON.stringify({ path: request.url, body, hasLeader: request.headers["grpc-metadata-hasleader"] });
      if (request.url === "/chunked") {
        // Many chunks, a multi-byte character split between two of them.
        const text = JSON.stringify({ value: "é".repeat(5000) });
        const bytes = Buffer.from(text);
        response.writeHead(200, { "content-type": "application/json" });
        for (let at = 0; at < bytes.length; at += 777) response.write(bytes.subarray(at, at + 777));
        response.end();
      } else if (request.url === "/close") {
        response.writeHead(200, { "content-type": "application/json", connection: "close" });
        response.end(answer);
      } else if (request.url === "/refused") {
        response.writeHead(503, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: "etcdserver: no leader", code: 14 }));
      } else if (request.url === "/hold") {
        hold.push(() => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(answer);
        });
      } else if (request.url?.startsWith("/never")) {
        unanswered.push(request.url); // no answer
      } else {
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
        response.end(answer);
      }
    });
  });
  server.on("connection", () => connections++);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test("GatewayConnections.post() sends the JSON body and reuses one kept-alive connection for calls in turn", async () => {
  const pool = new GatewayConnections({ url, maxSockets: 4 });
  const before = connections;
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await pool.post("/v3/kv/range", JSON.stringify({ key: `k${i}` }), 2_000);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.body), {
        path: "/v3/kv/range",
        body: JSON.stringify({ key: `k${i}` }),
        hasLeader: "true",
      });
    }
    assert.equal(connections - before, 1);
  } finally {
    pool.destroy();
  }
});

test("GatewayConnections.post() reads a chunked answer whole, and an error answer with its status", async () => {
  const pool = new GatewayConnections({ url, maxSockets: 1 });
  try {
    const chunked = await pool.post("/chunked", "{}", 2_000);
    assert.equal(JSON.parse(chunked.body).value, "é".repeat(5000));
    const refused = await pool.post("/refused", "{}", 2_000);
    assert.equal(refused.status, 503);
    assert.equal(JSON.parse(refused.body).error, "etcdserver: no leader");
    const after = await pool.post("/ok", "{}", 2_000);
    assert.equal(after.status, 200, "the connection is still in step after both");
  } finally {
    pool.destroy();
  }
});

test("GatewayConnections.post() opens at most maxSockets connections; further calls wait for a free one", async () => {
  const pool = new GatewayConnections({ url, maxSockets: 2 });
  const before = connections;
  try {
    const calls = Array.from({ length: 5 }, (_, i) => pool.post("/hold", JSON.stringify({ i }), 5_000));
    while (hold.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(connections - before, 2);
    // Answer as they come in, until all five were served over the same two connections.
    let answered = 0;
    while (answered < 5) {
      const next = hold.shift();
      if (next) {
        next();
        answered++;
      } else await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const bodies = (await Promise.all(calls)).map((answer) => JSON.parse(JSON.parse(answer.body).body).i);
    assert.deepEqual(bodies, [0, 1, 2, 3, 4]);
    assert.equal(connections - before, 2);
  } finally {
    pool.destroy();
  }
});

test("GatewayConnections.post() opens a new connection after an answer that closes it, or a server that closed one", async () => {
  const pool = new GatewayConnections({ url, maxSockets: 1 });
  const before = connections;
  try {
    await pool.post("/close", "{}", 2_000);
    assert.equal((await pool.post("/ok", "{}", 2_000)).status, 200);
    assert.equal(connections - before, 2);
    server.closeIdleConnections();
    await eventually(() => pool.openConnections === 0, "the pool to see the server's close");
    assert.equal((await pool.post("/ok", "{}", 2_000)).status, 200);
    assert.equal(connections - before, 3);
  } finally {
    pool.destroy();
  }
});

test("GatewayConnections.post() rejects after its timeout, and destroy() rejects calls under way", async () => {
  const pool = new GatewayConnections({ url, maxSockets: 2 });
  await assert.rejects(pool.post("/never", "{}", 100), /no answer from 127\.0\.0\.1:\d+ in 100 ms/);
  const pending = pool.post("/never/pending", "{}", 10_000);
  await eventually(() => unanswered.includes("/never/pending"), "the server to have the call");
  pool.destroy();
  await assert.rejects(pending, /closed/);
  await assert.rejects(pool.post("/ok", "{}", 1_000), /closed/);
});

test("GatewayConnections.post() rejects with the connect error when nothing listens", async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const pool = new GatewayConnections({ url: new URL(`http://127.0.0.1:${port}`), maxSockets: 1 });
  await assert.rejects(pool.post("/ok", "{}", 2_000), { code: "ECONNREFUSED" });
  pool.destroy();
});

test("AnswerReader.push() reads an answer given one byte at a time: chunks, extensions and trailers", () => {
  const text = `{"v":"${"ü".repeat(40)}"}`;
  const bytes = Buffer.from(text);
  const wire = Buffer.concat([
    Buffer.from("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"),
    Buffer.from(`5;ext=1\r\n`),
    bytes.subarray(0, 5),
    Buffer.from(`\r\n${(bytes.length - 5).toString(16)}\r\n`),
    bytes.subarray(5),
    Buffer.from("\r\n0\r\nX-Trailer: yes\r\n\r\n"),
  ]);
  const reader = new AnswerReader();
  let done = false;
  for (let i = 0; i < wire.length; i++) {
    assert.equal(done, false, "not done before the last byte");
    done = reader.push(wire.subarray(i, i + 1));
  }
  assert.equal(done, true);
  assert.equal(reader.status, 200);
  assert.equal(reader.keepAlive, true);
  assert.equal(reader.body, text);
});

test("AnswerReader.push() refuses what is not HTTP/1 and chunks longer than they said", () => {
  assert.throws(() => new AnswerReader().push(Buffer.from("SSH-2.0-OpenSSH\r\n\r\n")), /not HTTP\/1/);
  const reader = new AnswerReader();
  assert.throws(
    () => reader.push(Buffer.from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n")),
    /longer than it said/,
  );
});
