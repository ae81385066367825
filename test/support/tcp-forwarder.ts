// A TCP forwarder for tests: listens first (its port can be handed to a process before that process's own port is
// known), forwards each connection to the target set later, and counts the connections it carried.

import { connect, createServer, type Socket } from "node:net";

export interface TcpForwarder {
  port: number;
  /** Where connections go from now on. */
  forwardTo(port: number, host?: string): void;
  /** Connections forwarded so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startTcpForwarder(): Promise<TcpForwarder> {
  let target: { port: number; host: string } | undefined;
  let count = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    if (!target) {
      client.destroy();
      return;
    }
    count++;
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once("close", () => open.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    forwardTo(port, host = "127.0.0.1") {
      target = { port, host };
    },
    connections: () => count,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
