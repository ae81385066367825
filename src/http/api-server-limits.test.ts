// Connection and request limits of the API server over real HTTPS (src/http/testing-api-server.ts: our real server
// over a TEST DOUBLE OF THE REGISTRY), with timeouts made small through its options: a TLS handshake, headers and a
// body that do not arrive in time and an idle kept-alive connection are closed; past the in-flight limits requests
// get 429 while watches and health probes go on; and 1,000 slow clients do not stop a normal client's GET.
// Passthrough routes (what the platform relays to connected clusters) obey the same reserve and flow control.

import assert from "node:assert/strict";
import { Agent, request as httpsRequest } from "node:https";
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

/**
 * Writes a little more every 100 ms until the connection closes (a slow client that is never idle). A connection the
 * server closed before this was called (a loaded machine) has no close event to come: the timer ends on its own.
 */
function trickle(socket: Socket, piece: string): void {
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write(piece);
  }, 100);
  socket.once("close", () => clearInterval(timer));
}

const slowBodyHead = (contentLength: number, token = "admin-token") =>
  `POST ${USERS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
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

/** Clients of a server with connection caps, from chosen local addresses; idle connections it opens go in `open`. */
function clientsOf(server: () => TestApiServer, open: RawConnection[]) {
  /** An idle TLS connection from `from`, or undefined when the server closed it before the handshake. */
  const idle = async (from: string) => {
    const tcp = netConnect({ host: "127.0.0.1", port: server().server.port, localAddress: from });
    const socket = tlsConnect({ socket: tcp, ca: server().ca, servername: "localhost" });
    const connection = collect(socket);
    const ok = await new Promise<boolean>((resolve) => {
      socket.once("secureConnect", () => resolve(true));
      socket.once("close", () => resolve(false));
    });
    if (ok) open.push(connection);
    return ok ? connection : undefined;
  };
  /** One request through a kept-alive agent: status, headers, and whether it reused the agent's connection. */
  const onAgent = (agent: Agent, path: string, token: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; reused: boolean }>((resolve, reject) => {
      const req = httpsRequest(
        `${server().server.url}${path}`,
        { agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, reused: req.reusedSocket }));
        },
      );
      req.on("error", reject);
      req.end();
    });
  /** One request on its own connection from `from`: status, headers and body. */
  const once = (from: string, path: string, token: string | null = "admin-token") =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      const req = httpsRequest(
        `${server().server.url}${path}`,
        { ca: server().ca, headers, agent: false, localAddress: from },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on("error", reject);
      req.end();
    });
  return { idle, onAgent, once };
}

/** A server capped at 20 connections, 10 per address (a reserve of 16 above: connection-limit.ts), for a suite. */
function cappedServer() {
  const open: RawConnection[] = [];
  let api: TestApiServer | undefined;
  const server = (): TestApiServer => {
    if (!api) throw new Error("the server has not started");
    return api;
  };
  const capped = {
    get api() {
      return server();
    },
    open,
    ...clientsOf(server, open),
  };
  before(async () => {
    api = await startTestApiServer({ limits: { maxConnections: 20, maxConnectionsPerClient: 10 } });
  });
  after(async () => {
    for (const connection of open) connection.socket.destroy();
    await api?.stop();
  });
  return capped;
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

describe("startApiServer() flow control", () => {
  let api: TestApiServer;
  const call = (method: string, path: string, options?: CallOptions) => api.call(method, path, options);
  const asAlice = { token: "alice-token" };
  const metric = async (series: string) => metricValue((await call("GET", "/metrics")).text, series);
  const WORKLOAD = 'priority_level="workload",flow_schema="authenticated"';
  before(async () => {
    // 3 seats: 2 for the workload level, 1 for unauthenticated requests; reads capped at 2, writes at 1.
    api = await startTestApiServer({ limits: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 } });
  });
  after(async () => {
    await api?.stop();
  });

  it(
    "startApiServer() queues a user's requests past the seats and serves them as seats free; admins, watches and probes go on",
    BOUND,
    async () => {
      const held = [call("GET", `${USERS}/slow`, asAlice), call("GET", `${USERS}/slow`, asAlice)];
      await waitFor(() => api.slow.length === 2);
      const queued = [call("GET", USERS, asAlice), call("GET", "/apis", asAlice)];
      // Non-resource paths (fastify serves them) queue alike.
      while ((await metric(`apiserver_flowcontrol_current_inqueue_requests{${WORKLOAD}}`)) !== 2) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(await metric(`apiserver_flowcontrol_current_executing_requests{${WORKLOAD}}`), 2);
      assert.equal(await metric('apiserver_flowcontrol_nominal_limit_seats{priority_level="workload"}'), 2);
      assert.equal(await metric('apiserver_flowcontrol_nominal_limit_seats{priority_level="unauthenticated"}'), 1);
      assert.equal(await metric('apiserver_current_inflight_requests{request_kind="readOnly"}'), 2);
      // Exempt: the admin (system:masters), watches and health probes.
      assert.equal((await call("GET", USERS)).status, 200);
      const watch = api.openWatch(`${USERS}?watch=true&resourceVersion=1`);
      assert.equal((await watch.head).statusCode, 200);
      watch.abort();
      for (const probe of ["/readyz", "/livez", "/healthz", "/readyz/ping"]) {
        assert.equal((await call("GET", probe, { token: null })).status, 200, probe);
      }
      // Seats come back when answers complete; the queued requests are served.
      for (const release of api.slow.splice(0)) release();
      for (const answer of await Promise.all(held)) assert.equal(answer.status, 404);
      for (const answer of await Promise.all(queued)) assert.equal(answer.status, 200);
      assert.equal(await metric(`apiserver_flowcontrol_current_inqueue_requests{${WORKLOAD}}`), 0);
      assert.equal(await metric('apiserver_current_inflight_requests{request_kind="readOnly"}'), 0);
      assert.ok((await metric(`apiserver_flowcontrol_dispatched_requests_total{${WORKLOAD}}`)) ?? 0 >= 4);
    },
  );

  it(
    "startApiServer() answers 429 with Retry-After to a user whose queue is full, while another user is served first",
    BOUND,
    async () => {
      const held = [call("GET", `${USERS}/slow`, asAlice), call("GET", `${USERS}/slow`, asAlice)];
      await waitFor(() => api.slow.length === 2);
      const finished: string[] = [];
      const aliceQueued = Array.from({ length: 50 }, () =>
        call("GET", USERS, asAlice).then((answer) => {
          finished.push("alice");
          return answer;
        }),
      );
      while ((await metric(`apiserver_flowcontrol_current_inqueue_requests{${WORKLOAD}}`)) !== 50) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const refused = await call("GET", USERS, asAlice);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers["retry-after"], "1");
      assert.deepEqual(refused.json(), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'too many requests from you are waiting (priority level "workload"), please try again later',
        reason: "TooManyRequests",
        details: { retryAfterSeconds: 1 },
        code: 429,
      });
      const carol = call("GET", USERS, { token: "carol-token" }).then((answer) => {
        finished.push("carol");
        return answer;
      });
      while ((await metric(`apiserver_flowcontrol_current_inqueue_requests{${WORKLOAD}}`)) !== 51) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // One seat frees: carol, who has used nothing, goes before alice's fifty.
      api.slow.shift()?.();
      assert.equal((await carol).status, 200);
      assert.ok(finished.indexOf("carol") <= 1, `carol served among the first: ${finished.slice(0, 5)}`);
      for (const release of api.slow.splice(0)) release();
      await Promise.all(held);
      for (const answer of await Promise.all(aliceQueued)) assert.equal(answer.status, 200);
      const metrics = (await call("GET", "/metrics")).text;
      assert.equal(
        metricValue(metrics, `apiserver_flowcontrol_rejected_requests_total{${WORKLOAD},reason="queue-full"}`),
        1,
      );
      assert.equal(metricValue(metrics, 'apiserver_dropped_requests_total{request_kind="readOnly"}'), 1);
      assert.match(metrics, /apiserver_request_total\{verb="LIST",[^}]*resource="users"[^}]*code="429"\} 1/);
      assert.match(metrics, /apiserver_flowcontrol_request_wait_duration_seconds_count\{priority_level="workload"/);
    },
  );

  it(
    "startApiServer() holds a write past the mutating seat, and closes the connection of a refused write whose body it did not read",
    BOUND,
    async () => {
      // A create whose body is still on its way holds the one mutating seat.
      const holder = await openTls(api);
      holder.socket.write(slowBodyHead(100, "alice-token"));
      while ((await metric('apiserver_current_inflight_requests{request_kind="mutating"}')) !== 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const waiting = Array.from({ length: 50 }, () => call("DELETE", `${USERS}/nobody`, asAlice));
      while ((await metric(`apiserver_flowcontrol_current_inqueue_requests{${WORKLOAD}}`)) !== 50) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal((await call("GET", USERS, { token: "carol-token" })).status, 200, "reads have their own cap");
      const withBody = await openTls(api);
      withBody.socket.write(slowBodyHead(100, "alice-token"));
      await withBody.closed;
      assert.match(withBody.text(), /^HTTP\/1.1 429 Too Many Requests\r\n/);
      assert.match(withBody.text(), /\r\nconnection: close\r\n/i);
      assert.match(withBody.text(), /\r\nretry-after: 1\r\n/i);
      // Once the holder's body is complete, its seat goes to the waiting writes.
      holder.socket.write(`"metadata":{"name":"held"}}`.padEnd(99, " "));
      await waitFor(() => holder.text().includes("\r\n\r\n"));
      assert.match(holder.text(), /^HTTP\/1.1 201 Created\r\n/);
      holder.socket.destroy();
      for (const answer of await Promise.all(waiting)) assert.equal(answer.status, 404);
      assert.equal((await call("DELETE", `${USERS}/held`)).status, 200);
      assert.equal(await metric('apiserver_current_inflight_requests{request_kind="mutating"}'), 0);
    },
  );

  it(
    "startApiServer() holds relayed (passthrough) requests to the caller's seats: past its queue they get 429 and never reach the route; admins and long-running ones go on",
    BOUND,
    async () => {
      const held = [call("GET", "/relay/slow", asAlice), call("GET", "/relay/slow", asAlice)];
      await waitFor(() => api.relayHeld.length === 2);
      const relayed = api.relayed;
      const queued = Array.from({ length: 50 }, () => call("GET", "/relay/queued", asAlice));
      while ((await metric(`apiserver_flowcontrol_current_inqueue_requests{${WORKLOAD}}`)) !== 50) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const refused = await call("GET", "/relay/flood", asAlice);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers["retry-after"], "1");
      assert.equal(refused.json().reason, "TooManyRequests");
      assert.equal(api.relayed, relayed, "nothing past alice's seats reached the route");
      // Exempt: the admin, and a long-running request (it would hold a seat for hours).
      assert.equal((await call("GET", "/relay/admin")).status, 200);
      const watch = await call("GET", "/relay/watched?watch=1", asAlice);
      assert.equal(watch.status, 200);
      assert.deepEqual(watch.json(), { user: "alice" });
      assert.equal(api.relayed, relayed + 2);
      // Seats come back as answers complete; the queued requests are relayed.
      for (const release of api.relayHeld.splice(0)) release();
      for (const answer of await Promise.all(held)) assert.equal(answer.status, 200);
      for (const answer of await Promise.all(queued)) assert.equal(answer.status, 200);
      assert.equal(api.relayed, relayed + 54);
      assert.equal(await metric('apiserver_current_inflight_requests{request_kind="readOnly"}'), 0);
    },
  );
});

describe("startApiServer() connection caps", () => {
  const capped = cappedServer();
  const { idle, onAgent, once, open } = capped;

  it(
    "startApiServer() closes one client's connections past its cap before TLS; /readyz and other clients still get in",
    BOUND,
    async () => {
      for (let i = 0; i < 10; i++) assert.ok(await idle("127.0.0.1"), `connection ${i}`);
      assert.equal(await idle("127.0.0.1"), undefined, "the 11th from the same address is closed at accept");
      assert.equal((await once("127.0.0.2", "/readyz", null)).status, 200);
      assert.equal((await once("127.0.0.2", USERS, "alice-token")).status, 200);
      const metrics = (await once("127.0.0.2", "/metrics")).body;
      assert.ok(
        (metricValue(metrics, 'apiserver_rejected_connections_total{reason="max-connections-per-client"}') ?? 0) >= 1,
      );
      assert.ok((metricValue(metrics, "apiserver_current_connections") ?? 0) >= 10);
    },
  );

  it(
    "startApiServer() keeps a reserve past the total for probes and admins; others get 429 on it, and beyond it nobody gets in",
    BOUND,
    async () => {
      for (let i = 0; i < 10; i++) assert.ok(await idle("127.0.0.2"), `connection ${i}`);
      // 20 open: the total is reached. The next connections are on the reserve, one request each but an admin's.
      const probe = await once("127.0.0.3", "/readyz", null);
      assert.equal(probe.status, 200);
      assert.equal(probe.headers.connection, "close");
      // An admin's stays open for its next requests: reconnecting for each would queue behind a flood at accept.
      const kept = new Agent({ keepAlive: true, maxSockets: 1, ca: capped.api.ca, localAddress: "127.0.0.5" });
      const first = await onAgent(kept, USERS, "admin-token");
      assert.equal(first.status, 200);
      assert.notEqual(first.headers.connection, "close");
      const second = await onAgent(kept, USERS, "admin-token");
      assert.equal(second.status, 200);
      assert.equal(second.reused, true, "the admin's second request on its reserve connection");
      // Someone else's request on that connection is refused, and closes it.
      const other = await onAgent(kept, USERS, "alice-token");
      assert.equal(other.reused, true);
      assert.equal(other.status, 429);
      assert.equal(other.headers.connection, "close");
      kept.destroy();
      const user = await once("127.0.0.3", USERS, "alice-token");
      assert.equal(user.status, 429);
      assert.equal(user.headers["retry-after"], "1");
      assert.match(
        JSON.parse(user.body).message,
        /connection limit; its reserved connections serve only health probes and admins/,
      );
      // That address gets no reserve connection for a while: a flood reconnecting to the reserve costs no handshakes.
      assert.equal(await idle("127.0.0.3"), undefined, "refused on the reserve: the next one is closed at accept");
      const unknown = await once("127.0.0.7", USERS, "no-such-token");
      assert.equal(unknown.status, 401);
      assert.equal(unknown.headers.connection, "close", "whatever the answer, a reserve connection serves one request");
      // One address may hold only 2 of the reserve's 16 connections.
      assert.ok(await idle("127.0.0.4"));
      assert.ok(await idle("127.0.0.4"));
      assert.equal(await idle("127.0.0.4"), undefined, "a third on the reserve from one address: closed at accept");
      // Fill the reserve with idle connections from more addresses: then nobody else gets in.
      for (let i = 2; i < 16; i++) assert.ok(await idle(`127.0.1.${i}`), `reserve ${i}`);
      assert.equal(await idle("127.0.0.6"), undefined, "past the reserve: closed at accept");
      // Once they close, their places are free again.
      for (const connection of open.splice(0)) connection.socket.destroy();
      let readyz = 0;
      while (readyz !== 200)
        readyz = await once("127.0.0.6", "/readyz", null).then(
          (r) => r.status,
          () => 0,
        );
      const metrics = (await once("127.0.0.6", "/metrics")).body;
      assert.ok((metricValue(metrics, 'apiserver_rejected_connections_total{reason="max-connections"}') ?? 0) >= 1);
    },
  );
});

describe("startApiServer() connection caps and kept-alive idle connections", () => {
  const capped = cappedServer();
  const { onAgent, once } = capped;

  it(
    "startApiServer() serves a client that opens a kept-alive connection per request (as client-node does) past its cap",
    BOUND,
    async () => {
      const agents: Agent[] = [];
      try {
        // Each request on a new agent that keeps its connection: 25 requests, 25 idle connections, a cap of 10.
        for (let i = 0; i < 25; i++) {
          const agent = new Agent({ keepAlive: true, ca: capped.api.ca, localAddress: "127.0.3.1" });
          agents.push(agent);
          assert.equal((await onAgent(agent, USERS, "alice-token")).status, 200, `request ${i}`);
        }
        const metrics = (await once("127.0.3.2", "/metrics")).body;
        assert.ok((metricValue(metrics, "apiserver_closed_idle_connections_total") ?? 0) >= 15);
        assert.equal(
          metricValue(metrics, 'apiserver_rejected_connections_total{reason="max-connections-per-client"}') ?? 0,
          0,
        );
      } finally {
        for (const agent of agents) agent.destroy();
      }
    },
  );
});

describe("startApiServer() connection reserve and passthrough routes", () => {
  const capped = cappedServer();
  const { idle, onAgent, once, open } = capped;

  it(
    "startApiServer() relays a passthrough request on the reserve only for an admin; anyone else gets 429 or 401 there and never reaches the route",
    BOUND,
    async () => {
      for (let i = 0; i < 10; i++) assert.ok(await idle("127.0.2.1"), `connection ${i}`);
      for (let i = 0; i < 10; i++) assert.ok(await idle("127.0.2.2"), `connection ${i}`);
      // 20 open: the total is reached; what comes next is on the reserve.
      const relayed = capped.api.relayed;
      const user = await once("127.0.2.3", "/relay/x", "alice-token");
      assert.equal(user.status, 429);
      assert.equal(user.headers.connection, "close");
      assert.match(JSON.parse(user.body).message, /its reserved connections serve only health probes and admins/);
      const anonymous = await once("127.0.2.4", "/relay/x", null);
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers.connection, "close", "a reserve connection serves one request");
      assert.equal(capped.api.relayed, relayed, "neither reached the route");
      // The admin is relayed, and its reserve connection stays open for its next requests.
      const kept = new Agent({ keepAlive: true, maxSockets: 1, ca: capped.api.ca, localAddress: "127.0.2.5" });
      const first = await onAgent(kept, "/relay/x", "admin-token");
      assert.equal(first.status, 200);
      assert.notEqual(first.headers.connection, "close");
      const second = await onAgent(kept, "/relay/x", "admin-token");
      assert.equal(second.status, 200);
      assert.equal(second.reused, true);
      kept.destroy();
      assert.equal(capped.api.relayed, relayed + 2);
      for (const connection of open.splice(0)) connection.socket.destroy();
    },
  );
});

describe("startApiServer() under 1,000 slow clients", () => {
  let api: TestApiServer;
  const connections: RawConnection[] = [];
  before(async () => {
    api = await startTestApiServer({
      limits: {
        tlsHandshakeTimeoutMs: 5_000,
        headerTimeoutMs: 5_000,
        bodyTimeoutMs: 5_000,
        idleTimeoutMs: 5_000,
        // All from one address: the connection caps are tested above.
        maxConnections: 0,
        maxConnectionsPerClient: 0,
      },
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
