// Connection and request limits of the API server over real HTTPS (src/http/testing-api-server.ts: our real server
// over a TEST DOUBLE OF THE REGISTRY), with timeouts made small through its options: a TLS handshake, headers and a
// body that do not arrive in time and an idle kept-alive connection are closed; past the in-flight limits requests
// get 429 while watches and health probes go on; and 1,000 slow clients do not stop a normal client's GET.

import assert from "node:assert/strict";
import { connect as netConnect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { type CallOptions, startTestApiServer, type TestApiServer, USERS } from "./testing-api-server.ts";

/** A raw client connection: what the server answered, and when it closed the connection. */
interface RawConnection {
  socket: Socket;
  text(): string;
  closed: Promise<void>;
}

function collect(socket: Socket): RawConnection {
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    text += chunk;
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, text: () => text, closed };
}

/** A TLS connection to the server, resolved once the handshake is done. */
async function openTls(api: TestApiServer): Promise<RawConnection> {
  const socket = tlsConnect({ host: "127.0.0.1", port: api.server.port, ca: api.ca, servername: "localhost" });
  const connection = collect(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", () => resolve());
    socket.once("error", reject);
  });
  return connection;
}

/** A TCP connection that never starts TLS. */
async function openTcp(api: TestApiServer): Promise<RawConnection> {
  const socket = netConnect({ host: "127.0.0.1", port: api.server.port });
  const connection = collect(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  return connection;
}

/** Writes a little more every 100 ms until the connection closes (a slow client that is never idle). */
function trickle(socket: Socket, piece: string): void {
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(piece);
  }, 100);
  socket.once("close", () => clearInterval(timer));
}

const slowBodyHead = (contentLength: number) =>
  `POST ${USERS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer admin-token\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n{`;

/** The body of the one HTTP answer in a raw exchange. */
function answerBody(text: string): Record<string, unknown> {
  return JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
}

/** The value of one series in the Prometheus text, or undefined when absent. */
function metricValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function waitFor(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 10));
}

// Generous bounds: they only stop a test that would otherwise wait for Node's own defaults (60 s to 300 s).
const BOUND = { timeout: 30_000 };

describe("startApiServer() connection timeouts", () => {
  let api: TestApiServer;
  before(async () => {
    api = await startTestApiServer({
      limits: { tlsHandshakeTimeoutMs: 300, headerTimeoutMs: 300, bodyTimeoutMs: 500, idleTimeoutMs: 1_000 },
    });
  });
  after(async () => {
    await api?.stop();
  });

  it("startApiServer() closes a connection that does not finish its TLS handshake in time", BOUND, async () => {
    const silent = await openTcp(api);
    const partial = await openTcp(api);
    partial.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])); // the start of a ClientHello
    await Promise.all([silent.closed, partial.closed]);
    assert.equal(silent.text(), "", "nothing is answered before TLS");
    assert.equal(partial.text(), "");
    const metrics = await api.call("GET", "/metrics");
    assert.ok((metricValue(metrics.text, "apiserver_tls_handshake_errors_total") ?? 0) >= 2);
  });

  it("startApiServer() answers 408 and closes a connection whose headers do not arrive in time", BOUND, async () => {
    const slow = await openTls(api);
    slow.socket.write(`GET ${USERS} HTTP/1.1\r\nHost: localhost\r\n`);
    trickle(slow.socket, "X-Slow: 1\r\n");
    // A connection that sends nothing at all after its handshake is closed the same way.
    const quiet = await openTls(api);
    await Promise.all([slow.closed, quiet.closed]);
    for (const connection of [slow, quiet]) {
      assert.match(connection.text(), /^HTTP\/1.1 408 Request Timeout\r\n/);
      assert.deepEqual(answerBody(connection.text()), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "the request was not received in time",
        reason: "Timeout",
        code: 408,
      });
    }
  });

  it("startApiServer() answers 408 and closes a connection whose body does not arrive in time", BOUND, async () => {
    const slow = await openTls(api);
    slow.socket.write(slowBodyHead(1_000));
    trickle(slow.socket, " ");
    await slow.closed;
    assert.match(slow.text(), /^HTTP\/1.1 408 Request Timeout\r\n/);
    assert.equal(answerBody(slow.text()).code, 408);
    // The audit record and the request metrics say what happened to the request.
    await waitFor(() => api.completed.some((c) => c.requestInfo.verb === "create" && c.code === 408));
    const completed = api.completed.find((c) => c.requestInfo.verb === "create" && c.code === 408)!;
    assert.equal(completed.reason, "Timeout");
    const metrics = await api.call("GET", "/metrics");
    assert.ok((metricValue(metrics.text, "apiserver_request_read_timeouts_total") ?? 0) >= 1);
    assert.match(metrics.text, /apiserver_request_total\{verb="POST",[^}]*resource="users"[^}]*code="408"\} 1/);
  });

  it("startApiServer() closes an idle kept-alive connection after the idle timeout", BOUND, async () => {
    const idle = await openTls(api);
    idle.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    await waitFor(() => idle.text().endsWith("ok"));
    assert.match(idle.text(), /^HTTP\/1.1 200 OK\r\n/);
    assert.match(idle.text(), /\r\nKeep-Alive: timeout=1\r\n/i, "the client is told the idle timeout");
    await idle.closed;
    assert.equal(idle.text().match(/HTTP\/1.1 /g)?.length, 1, "closed without another answer");
  });

  it("startApiServer() lets a watch stream past the body timeout", BOUND, async () => {
    const watch = api.openWatch(`${USERS}?watch=true&resourceVersion=1`);
    assert.equal((await watch.head).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const created = await api.call("POST", USERS, {
      body: JSON.stringify({ apiVersion: "test.platform.sh/v1", kind: "User", metadata: { name: "late" } }),
    });
    assert.equal(created.status, 201);
    const [event] = await watch.nextLines(1);
    assert.equal(event.type, "ADDED");
    assert.equal((event.object as { metadata: { name: string } }).metadata.name, "late");
    watch.abort();
  });
});

describe("startApiServer() in-flight limits", () => {
  let api: TestApiServer;
  const call = (method: string, path: string, options?: CallOptions) => api.call(method, path, options);
  before(async () => {
    api = await startTestApiServer({ limits: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 } });
  });
  after(async () => {
    await api?.stop();
  });

  it(
    "startApiServer() answers 429 with Retry-After past the read-only limit; watches and probes go on",
    BOUND,
    async () => {
      const held = [call("GET", `${USERS}/slow`), call("GET", `${USERS}/slow`)];
      await waitFor(() => api.slow.length === 2);

      const refused = await call("GET", USERS);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers["retry-after"], "1");
      assert.equal(refused.headers["content-type"], "application/json");
      assert.deepEqual(refused.json(), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Too many requests, please try again later.",
        reason: "TooManyRequests",
        details: { retryAfterSeconds: 1 },
        code: 429,
      });
      // Non-resource paths count too (fastify serves them).
      assert.equal((await call("GET", "/apis")).status, 429);
      // A mutating request has its own limit.
      const created = await call("POST", USERS, {
        body: JSON.stringify({ apiVersion: "test.platform.sh/v1", kind: "User", metadata: { name: "carol" } }),
      });
      assert.equal(created.status, 201);
      // Exempt: watches and health probes.
      const watch = api.openWatch(`${USERS}?watch=true&resourceVersion=1`);
      assert.equal((await watch.head).statusCode, 200);
      watch.abort();
      for (const probe of ["/readyz", "/livez", "/healthz", "/readyz/ping"]) {
        assert.equal((await call("GET", probe, { token: null })).status, 200, probe);
      }

      // Slots come back when answers complete.
      for (const release of api.slow.splice(0)) release();
      for (const answer of await Promise.all(held)) assert.equal(answer.status, 404);
      for (let i = 0; i < 5; i++) {
        assert.equal((await call("GET", USERS)).status, 200);
        assert.equal((await call("GET", "/apis")).status, 200);
      }
      const metrics = (await call("GET", "/metrics")).text;
      // The scrape itself is the one read-only request in flight.
      assert.equal(metricValue(metrics, 'apiserver_current_inflight_requests{request_kind="readOnly"}'), 1);
      assert.equal(metricValue(metrics, 'apiserver_current_inflight_requests{request_kind="mutating"}'), 0);
      assert.equal(metricValue(metrics, 'apiserver_dropped_requests_total{request_kind="readOnly"}'), 2);
      assert.equal(metricValue(metrics, 'apiserver_dropped_requests_total{request_kind="mutating"}'), 0);
      assert.match(metrics, /apiserver_request_total\{verb="LIST",[^}]*resource="users"[^}]*code="429"\} 1/);
    },
  );

  it(
    "startApiServer() answers 429 past the mutating limit and closes a connection whose body it refused",
    BOUND,
    async () => {
      // A create whose body is still on its way holds the one mutating slot.
      const holder = await openTls(api);
      holder.socket.write(slowBodyHead(100));
      const inflightMutating = async () =>
        metricValue(
          (await call("GET", "/metrics")).text,
          'apiserver_current_inflight_requests{request_kind="mutating"}',
        );
      while ((await inflightMutating()) !== 1) await new Promise((resolve) => setTimeout(resolve, 10));
      const refused = await call("DELETE", `${USERS}/nobody`);
      assert.equal(refused.status, 429);
      assert.equal(refused.json().reason, "TooManyRequests");
      assert.equal(refused.headers.connection, "keep-alive", "no body left unread: the connection stays");

      const withBody = await openTls(api);
      withBody.socket.write(slowBodyHead(100));
      await withBody.closed;
      assert.match(withBody.text(), /^HTTP\/1.1 429 Too Many Requests\r\n/);
      assert.match(withBody.text(), /\r\nconnection: close\r\n/i);
      assert.match(withBody.text(), /\r\nretry-after: 1\r\n/i);

      // Reads are not affected; once the holder's body is complete its slot is free again.
      assert.equal((await call("GET", USERS)).status, 200);
      holder.socket.write(`"metadata":{"name":"held"}}`.padEnd(99, " "));
      await waitFor(() => holder.text().includes("\r\n\r\n"));
      assert.match(holder.text(), /^HTTP\/1.1 201 Created\r\n/);
      holder.socket.destroy();
      assert.equal((await call("DELETE", `${USERS}/held`)).status, 200);
      assert.equal(await inflightMutating(), 0);
      const metrics = (await call("GET", "/metrics")).text;
      assert.equal(metricValue(metrics, 'apiserver_dropped_requests_total{request_kind="mutating"}'), 2);
    },
  );
});

describe("startApiServer() under 1,000 slow clients", () => {
  let api: TestApiServer;
  const connections: RawConnection[] = [];
  before(async () => {
    api = await startTestApiServer({
      limits: { tlsHandshakeTimeoutMs: 5_000, headerTimeoutMs: 5_000, bodyTimeoutMs: 5_000, idleTimeoutMs: 5_000 },
    });
  });
  after(async () => {
    for (const connection of connections) connection.socket.destroy();
    await api?.stop();
  });

  it("startApiServer() answers a normal GET while 1,000 slow clients hold connections, then closes them", {
    timeout: 60_000,
  }, async () => {
    const neverHandshaking: RawConnection[] = [];
    const slowHeaders: RawConnection[] = [];
    const slowBodies: RawConnection[] = [];
    // Opened in batches so the test's own TLS work does not starve the server it measures.
    for (let batch = 0; batch < 10; batch++) {
      const opened = await Promise.all([
        ...Array.from({ length: 34 }, () => openTcp(api)),
        ...Array.from({ length: 33 }, () => openTls(api)),
        ...Array.from({ length: 33 }, () => openTls(api)),
      ]);
      neverHandshaking.push(...opened.slice(0, 34));
      for (const connection of opened.slice(34, 67)) {
        connection.socket.write(`GET ${USERS} HTTP/1.1\r\nHost: localhost\r\n`);
        trickle(connection.socket, "X-Slow: 1\r\n");
        slowHeaders.push(connection);
      }
      for (const connection of opened.slice(67)) {
        connection.socket.write(slowBodyHead(10_000));
        trickle(connection.socket, " ");
        slowBodies.push(connection);
      }
      connections.push(...opened);
    }
    assert.equal(connections.length, 1_000);

    const get = await api.call("GET", USERS);
    assert.equal(get.status, 200);
    assert.equal(get.json().kind, "UserList");

    // Every slow connection is closed by the server: no TLS answer, 408 for late headers, 408 or 429 for bodies.
    await Promise.all(connections.map((c) => c.closed));
    for (const connection of neverHandshaking) assert.equal(connection.text(), "");
    for (const connection of slowHeaders) assert.match(connection.text(), /^HTTP\/1.1 408 /);
    const refused = slowBodies.filter((c) => /^HTTP\/1.1 429 /.test(c.text())).length;
    const timedOut = slowBodies.filter((c) => /^HTTP\/1.1 408 /.test(c.text())).length;
    assert.equal(refused + timedOut, slowBodies.length);
    const metrics = (await api.call("GET", "/metrics")).text;
    assert.equal(metricValue(metrics, 'apiserver_dropped_requests_total{request_kind="mutating"}'), refused);
    assert.ok((metricValue(metrics, "apiserver_tls_handshake_errors_total") ?? 0) >= neverHandshaking.length);
    assert.ok((metricValue(metrics, "apiserver_request_read_timeouts_total") ?? 0) >= slowHeaders.length + timedOut);
  });
});
