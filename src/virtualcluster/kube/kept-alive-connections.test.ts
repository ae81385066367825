// KeptAliveConnections against a plain TCP server that answers as a script says (the server's keep-alive behaviour,
// including its mistakes, is what is under test): connections are reused, never after an answer that forbids it,
// broke off or came with bytes after it; a GET racing the server's close of an idle connection is sent again, a
// POST never; deadlines and answer bounds hold; nothing a caller passes can add a line to the request head.

import assert from "node:assert/strict";
import { connect, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { KeptAliveConnections, requestHead } from "./kept-alive-connections.ts";

type Script = (request: string, socket: Socket, index: number) => void;

/** A TCP server that hands every request (head and body) and its index on its connection to `script()`. */
function scriptedServer(): { server: Server; connections: Socket[]; requests: string[]; script: { answer: Script } } {
  const connections: Socket[] = [];
  const requests: string[] = [];
  const script = { answer: ((_request, socket) => socket.end()) as Script };
  const server = createServer((socket) => {
    connections.push(socket);
    let buffered = "";
    let index = 0;
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      for (let end = buffered.indexOf("\r\n\r\n"); end !== -1; end = buffered.indexOf("\r\n\r\n")) {
        const length = Number(/content-length: (\d+)/.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const request = buffered.slice(0, end + 4 + length);
        buffered = buffered.slice(end + 4 + length);
        requests.push(request);
        script.answer(request, socket, index++);
      }
    });
  });
  return { server, connections, requests, script };
}

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

describe("KeptAliveConnections", () => {
  const server = scriptedServer();
  let port = 0;
  let pool: KeptAliveConnections;
  const newPool = () => new KeptAliveConnections(() => connect({ host: "127.0.0.1", port }));

  async function send(method = "GET", body?: string, options: { timeoutMs?: number; maxBodyBytes?: number } = {}) {
    const headers = body === undefined ? {} : { "content-length": Buffer.byteLength(body) };
    const answer = await pool.exchange(method, {
      head: requestHead(method, "/x", "server", headers),
      body,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    });
    return { status: answer.status, body: answer.body.toString() };
  }

  before(async () => {
    await new Promise<void>((resolve) => server.server.listen(0, "127.0.0.1", resolve));
    port = (server.server.address() as { port: number }).port;
    pool = newPool();
  });
  after(async () => {
    pool.close();
    for (const socket of server.connections) socket.destroy();
    await new Promise((resolve) => server.server.close(resolve));
  });

  it("exchange() sends head and body, and reuses a kept-alive connection for the next request", async () => {
    server.connections.length = 0;
    server.script.answer = (request, socket, index) => socket.write(ok(`${index}:${request.split("\r\n\r\n")[1]}`));
    for (let i = 0; i < 3; i++)
      assert.deepEqual(await send("POST", `{"n":${i}}`), { status: 200, body: `${i}:{"n":${i}}` });
    assert.equal(server.connections.length, 1);
  });

  it("exchange() reads chunked answers and error statuses whole", async () => {
    server.script.answer = (_request, socket) =>
      socket.write('HTTP/1.1 409 Conflict\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n');
    assert.deepEqual(await send(), { status: 409, body: '{"a": 1}' });
  });

  it("exchange() does not reuse a connection the server asked to close", async () => {
    pool.close();
    pool = newPool();
    server.connections.length = 0;
    server.script.answer = (_request, socket) => socket.write(ok("bye", "connection: close\r\n"));
    await send();
    await send();
    assert.equal(server.connections.length, 2);
  });

  it("exchange() does not keep a connection past the server's keep-alive timeout", async () => {
    server.connections.length = 0;
    // timeout=1: a second less is nothing, so the connection is not used again.
    server.script.answer = (_request, socket) => socket.write(ok("short", "keep-alive: timeout=1\r\n"));
    await send();
    await send();
    assert.equal(server.connections.length, 2);
  });

  it("exchange() sends a GET again on a new connection when the server closed the reused one unanswered", async () => {
    server.connections.length = 0;
    server.script.answer = (_request, socket) => socket.write(ok("first"));
    await send();
    // The server's keep-alive timeout races the next request: the connection closes without an answer.
    server.script.answer = (_request, socket, index) => (index === 0 ? socket.write(ok("fresh")) : socket.destroy());
    assert.deepEqual(await send(), { status: 200, body: "fresh" });
    assert.equal(server.connections.length, 2);
  });

  it("exchange() never sends a POST twice: its connection closed before the answer fails it", async () => {
    server.script.answer = (_request, socket) => socket.write(ok("first"));
    await send();
    server.script.answer = (_request, socket, index) => (index === 0 ? socket.write(ok("fresh")) : socket.destroy());
    const before = server.requests.length;
    await assert.rejects(send("POST", "{}"), (error: NodeJS.ErrnoException) => error.code === "ECONNRESET");
    assert.equal(server.requests.length, before + 1);
  });

  it("exchange() fails on an answer that breaks off or is malformed, and drops its connection", async () => {
    server.script.answer = (_request, socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort");
    await assert.rejects(send(), /closed mid-answer/);
    server.connections.length = 0;
    server.script.answer = (_request, socket) =>
      socket.write("HTTP/1.1 200 OK\r\nx: 1\r\n folded\r\ncontent-length: 0\r\n\r\n");
    await assert.rejects(send(), /malformed header/);
    server.script.answer = (_request, socket) => socket.write(ok("fine"));
    await send();
    assert.equal(server.connections.length, 2, "the malformed answer's connection was not used again");
  });

  it("exchange() delivers an answer followed by stray bytes, and does not reuse that connection", async () => {
    pool.close();
    pool = newPool();
    server.connections.length = 0;
    let answered = 0;
    server.script.answer = (_request, socket) =>
      socket.write(answered++ === 0 ? `${ok("one")}HTTP/1.1 200` : ok("two"));
    assert.deepEqual(await send(), { status: 200, body: "one" });
    assert.deepEqual(await send(), { status: 200, body: "two" });
    assert.equal(server.connections.length, 2);
  });

  it("exchange() fails an answer longer than its bound", async () => {
    server.script.answer = (_request, socket) => socket.write(ok("x".repeat(2000)));
    await assert.rejects(send("GET", undefined, { maxBodyBytes: 1000 }), /longer than 1000 bytes/);
  });

  it("exchange() fails with ETIMEDOUT when no answer comes in time, and closes that connection", async () => {
    const closed = new Promise<void>((resolve) => {
      server.script.answer = (_request, socket) => socket.once("close", () => resolve());
    });
    await assert.rejects(send("GET", undefined, { timeoutMs: 1 }), (error: NodeJS.ErrnoException) => {
      assert.equal(error.code, "ETIMEDOUT");
      return true;
    });
    await closed;
  });

  it("requestHead() refuses what would add a line to the head", () => {
    assert.throws(
      () => requestHead("GET", "/x", "host", { "x-a": "1\r\nimpersonate-user: admin" }),
      /Invalid character/,
    );
    assert.throws(() => requestHead("GET", "/x", "host", { "x-a\r\nb": "1" }), /must be a valid HTTP token/);
    assert.throws(() => requestHead("GET", "/x HTTP/1.1\r\nx: y", "host", {}), /unescaped/);
    assert.throws(() => requestHead("GET /x", "/x", "host", {}), /invalid method/);
    assert.equal(
      requestHead("GET", "/x", "h:1", { accept: "a", "impersonate-group": ["g1", "g2"] }),
      "GET /x HTTP/1.1\r\nhost: h:1\r\naccept: a\r\nimpersonate-group: g1\r\nimpersonate-group: g2\r\n\r\n",
    );
  });
});
