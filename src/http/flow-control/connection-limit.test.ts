import assert from "node:assert/strict";
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { ConnectionGate, defaultConnectionLimits, defaultsFor, RESERVE_REFUSED_MS } from "./connection-limit.ts";

/** A TCP client: resolves once the server either kept it (said "hi") or closed it. */
function dial(port: number, localAddress: string): Promise<{ socket: Socket; kept: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress });
    socket.once("data", () => resolve({ socket, kept: true }));
    socket.once("close", () => resolve({ socket, kept: false }));
    socket.once("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNRESET" ? undefined : reject(error)));
  });
}

/** A TCP server behind `gate` that says "hi" on every connection it keeps. */
async function gatedServer(gate: ConnectionGate): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.write("hi"));
  gate.install(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

async function closeAll(server: Server, open: Socket[]): Promise<void> {
  for (const socket of open) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
}

describe("ConnectionGate", () => {
  let server: Server;
  let gate: ConnectionGate;
  let port: number;
  const open: Socket[] = [];

  before(async () => {
    gate = new ConnectionGate({ maxConnections: 6, maxPerClient: 4, reserve: 2 });
    ({ server, port } = await gatedServer(gate));
  });
  after(() => closeAll(server, open));

  it("ConnectionGate closes a client's connection past its cap, before the server sees it; other clients get in", async () => {
    for (let i = 0; i < 4; i++) {
      const { socket, kept } = await dial(port, "127.0.0.1");
      assert.equal(kept, true);
      open.push(socket);
    }
    const refused = await dial(port, "127.0.0.1");
    assert.equal(refused.kept, false);
    assert.equal(gate.counts.refused["max-connections-per-client"], 1);
    for (let i = 0; i < 2; i++) {
      const other = await dial(port, "127.0.0.2");
      assert.equal(other.kept, true);
      open.push(other.socket);
    }
    assert.equal(gate.counts.open, 6);
  });

  it("ConnectionGate lets connections in on the reserve past the total, marks them, and refuses beyond it", async () => {
    const first = await dial(port, "127.0.0.3");
    const second = await dial(port, "127.0.0.3");
    assert.equal(first.kept && second.kept, true);
    open.push(first.socket, second.socket);
    assert.equal(gate.counts.onReserve, 2);
    assert.equal(gate.onReserve(serverSide(first.socket)), true);
    assert.equal(gate.onReserve(serverSide(open[0])), false);
    const beyond = await dial(port, "127.0.0.4");
    assert.equal(beyond.kept, false);
    assert.equal(gate.counts.refused["max-connections"], 1);
    // A closed connection frees its place.
    first.socket.destroy();
    const onReserve = () => gate.counts.onReserve;
    while (onReserve() !== 1) await new Promise((resolve) => setImmediate(resolve));
    const again = await dial(port, "127.0.0.4");
    assert.equal(again.kept, true);
    open.push(again.socket);
  });

  it("defaultConnectionLimits() takes three quarters of the open-file limit up to 4,096, a quarter of that per client", () => {
    assert.deepEqual(defaultConnectionLimits(1024), { maxConnections: 768, maxPerClient: 192, reserve: 24 });
    assert.deepEqual(defaultConnectionLimits(1_048_576), { maxConnections: 4096, maxPerClient: 1024, reserve: 128 });
    assert.deepEqual(defaultConnectionLimits(20), { maxConnections: 64, maxPerClient: 16, reserve: 16 });
    assert.deepEqual(defaultsFor(0), { maxConnections: 0, maxPerClient: 0, reserve: 0 });
  });
});

/** What the server side of a client socket looks like to onReserve(): the peer's address and port. */
function serverSide(client: Socket): Socket {
  return { remoteAddress: client.localAddress, remotePort: client.localPort } as Socket;
}

describe("ConnectionGate after a refusal on the reserve", () => {
  let server: Server;
  let now = 0;
  const gate = new ConnectionGate({ maxConnections: 1, maxPerClient: 4, reserve: 16 }, { now: () => now });
  let port: number;
  const open: Socket[] = [];
  const kept = async (from: string) => {
    const dialed = await dial(port, from);
    if (dialed.kept) open.push(dialed.socket);
    return dialed.kept;
  };

  before(async () => {
    ({ server, port } = await gatedServer(gate));
  });
  after(() => closeAll(server, open));

  it("ConnectionGate closes an address's next reserve connections at accept for a while, not others'", async () => {
    assert.equal(await kept("127.0.0.1"), true, "the total");
    assert.equal(await kept("127.0.0.4"), true, "on the reserve");
    gate.refusedOnReserve({ remoteAddress: "127.0.0.4" } as Socket);
    assert.equal(await kept("127.0.0.4"), false, "refused on the reserve: no more reserve connections");
    assert.equal(gate.counts.refused["max-connections"], 1);
    assert.equal(await kept("127.0.0.5"), true, "another address still gets in on the reserve");
    now += RESERVE_REFUSED_MS + 1;
    assert.equal(await kept("127.0.0.4"), true, "and the address again, once the time is over");
  });
});

/** An HTTP server behind `gate`: /hold answers when release() is called, anything else at once; upgrades are kept. */
async function gatedHttpServer(gate: ConnectionGate) {
  const held: ServerResponse[] = [];
  const upgraded: Socket[] = [];
  const server = createHttpServer((request, response) => {
    if (request.url === "/hold") held.push(response);
    else response.end("ok");
  }).on("upgrade", (_request, socket: Socket) => {
    upgraded.push(socket);
    socket.write("HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: test\r\n\r\n");
  });
  gate.install(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const release = () => {
    for (const response of held.splice(0)) response.end("released");
  };
  const close = async () => {
    release();
    for (const socket of upgraded) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  /** Waits until `count` requests are held (the server has read them). */
  const holding = async (count: number) => {
    while (held.length < count) await new Promise((resolve) => setImmediate(resolve));
  };
  return { port, release, holding, close };
}

/** A kept-alive client connection from `from`: send() writes a request, reply() waits for the next answer's end. */
async function keptAlive(port: number, from: string) {
  const socket = connect({ port, host: "127.0.0.1", localAddress: from });
  let text = "";
  let waiting: (() => void) | undefined;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    text += chunk;
    waiting?.();
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.once("close", () => waiting?.());
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  return {
    socket,
    closed,
    isClosed: () => socket.destroyed,
    send: (path: string, headers = "") =>
      socket.write(`GET ${path} HTTP/1.1\r\nhost: test\r\nconnection: keep-alive\r\n${headers}\r\n`),
    /** Waits until the answers so far include `fragment` `count` times (or the connection closed). */
    async reply(fragment: string, count = 1): Promise<string> {
      while (text.split(fragment).length - 1 < count && !socket.destroyed) {
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
      }
      return text;
    },
  };
}

describe("ConnectionGate with kept-alive idle connections", () => {
  it("ConnectionGate closes a client's longest idle kept-alive connection at its cap instead of refusing the new one", async () => {
    const gate = new ConnectionGate({ maxConnections: 0, maxPerClient: 2, reserve: 0 });
    const http = await gatedHttpServer(gate);
    try {
      const first = await keptAlive(http.port, "127.0.0.1");
      first.send("/");
      await first.reply("ok");
      const second = await keptAlive(http.port, "127.0.0.1");
      second.send("/");
      await second.reply("ok");
      // Two answered, kept alive, idle: a third connection closes the first (idle longest), not the new one.
      const third = await keptAlive(http.port, "127.0.0.1");
      third.send("/");
      assert.match(await third.reply("ok"), /200 OK/);
      await first.closed;
      assert.equal(second.isClosed(), false);
      assert.equal(gate.counts.closedIdle, 1);
      assert.equal(gate.counts.refused["max-connections-per-client"], 0);
      assert.equal(gate.counts.open, 2);
    } finally {
      await http.close();
    }
  });

  it("ConnectionGate never closes a connection with a request in flight, an upgraded one, or one that sent nothing yet", async () => {
    const gate = new ConnectionGate({ maxConnections: 0, maxPerClient: 3, reserve: 0 });
    const http = await gatedHttpServer(gate);
    try {
      const busy = await keptAlive(http.port, "127.0.0.1");
      busy.send("/");
      await busy.reply("ok");
      busy.send("/hold"); // answered once, now waiting for its second answer: not idle
      await http.holding(1);
      const tunnel = await keptAlive(http.port, "127.0.0.1");
      tunnel.send("/");
      await tunnel.reply("ok");
      tunnel.send("/", "upgrade: test\r\nconnection: upgrade\r\n");
      await tunnel.reply("101 Switching Protocols");
      const silent = await keptAlive(http.port, "127.0.0.1");
      // None of the three is idle: the fourth is refused at accept, as before.
      const refused = await dial(http.port, "127.0.0.1");
      assert.equal(refused.kept, false);
      assert.equal(gate.counts.refused["max-connections-per-client"], 1);
      assert.equal(gate.counts.closedIdle, 0);
      assert.equal(busy.isClosed() || tunnel.isClosed() || silent.isClosed(), false);
      // Once the held request is answered its connection is idle, and makes room.
      http.release();
      await busy.reply("released");
      const next = await keptAlive(http.port, "127.0.0.1");
      next.send("/");
      assert.match(await next.reply("ok"), /200 OK/);
      await busy.closed;
      assert.equal(tunnel.isClosed() || silent.isClosed(), false);
    } finally {
      await http.close();
    }
  });

  it("ConnectionGate closes anyone's idle connection at the total, but not a reserve connection (that makes no room)", async () => {
    const gate = new ConnectionGate({ maxConnections: 2, maxPerClient: 2, reserve: 16 });
    const http = await gatedHttpServer(gate);
    try {
      const idle = await keptAlive(http.port, "127.0.0.1");
      idle.send("/");
      await idle.reply("ok");
      await keptAlive(http.port, "127.0.0.2");
      // The total is reached: a third address closes 127.0.0.1's idle connection and is not on the reserve.
      const third = await keptAlive(http.port, "127.0.0.3");
      await idle.closed;
      assert.equal(gate.counts.onReserve, 0);
      // Nothing idle left: the next goes on the reserve; answered and idle there, it is not closed for a newcomer.
      third.send("/hold");
      await http.holding(1);
      const onReserve = await keptAlive(http.port, "127.0.0.4");
      assert.equal(gate.counts.onReserve, 1);
      onReserve.send("/");
      await onReserve.reply("ok");
      const another = await keptAlive(http.port, "127.0.0.5");
      assert.equal(gate.counts.onReserve, 2);
      assert.equal(onReserve.isClosed() || another.isClosed(), false);
      assert.equal(gate.counts.closedIdle, 1);
    } finally {
      await http.close();
    }
  });
});
