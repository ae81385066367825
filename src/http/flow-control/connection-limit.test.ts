import assert from "node:assert/strict";
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
