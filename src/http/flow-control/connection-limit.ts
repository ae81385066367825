// Connection caps at accept, before TLS: at most maxConnections open connections in total and maxPerClient per
// client address (clientKey: IPv6 by /64). One more is closed as it is accepted, before any handshake work, so
// thousands of idle TLS connections from one client can no longer take every file descriptor and gigabytes of
// memory.
//
// A reserve of `reserve` connections above maxConnections keeps the server reachable for the two who must get in
// when it is full: health probes (/healthz, /livez, /readyz) and privileged callers (system:masters, platform
// admins). A connection accepted on the reserve serves one request and closes, unless a privileged caller sent it
// (then it stays open for that caller's next requests); the pipeline asks `onReserve()` after authentication and
// refuses anything else on it with 429 (refusals.ts, request-flow.ts). One client address may hold at most an
// eighth of the reserve (at least 2), a reserve connection that stays silent for 10 s is closed, and an address
// whose request on the reserve was refused gets no reserve connection for the next 10 s (closed at accept): holding
// the reserve takes many addresses, and a flood that keeps reconnecting to it no longer costs a TLS handshake each
// time (in bench/hostile.ts its 64 reserve places cost 64 to 260 handshakes a second). The per-client cap itself has no reserve: it is what
// stops one address from reaching the total.
//
// A cap met by kept-alive idle connections (answered, nothing in flight, not upgraded) makes room instead of refusing:
// the one idle longest is closed (the client's own at the per-client cap; at the total anyone's not on the reserve,
// since closing a reserve connection makes no room there), as a keep-alive
// timeout would have. Clients that open a connection per request and keep each alive for 90 s (client-node does)
// would otherwise be refused from about 11 requests a second on. Connections that never finished a request are not
// idle: they are what the caps are for.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server, Socket } from "node:net";
import { clientKey } from "./client-address.ts";

export interface ConnectionLimits {
  /** Open connections in total before the reserve; 0: no limit. */
  maxConnections: number;
  /** Open connections per client address; 0: no limit. */
  maxPerClient: number;
  /** Connections above maxConnections for health probes (one request each) and privileged callers. */
  reserve: number;
}

/** Defaults from the open-file limit: most descriptors for connections, some left for the store, files and children. */
export function defaultConnectionLimits(openFiles: number): ConnectionLimits {
  const maxConnections = Math.max(64, Math.min(4096, Math.floor((openFiles * 3) / 4)));
  return defaultsFor(maxConnections);
}

/** The per-client cap and the reserve that go with a total (explicit or default). */
export function defaultsFor(maxConnections: number): ConnectionLimits {
  if (maxConnections === 0) return { maxConnections: 0, maxPerClient: 0, reserve: 0 };
  return {
    maxConnections,
    maxPerClient: Math.max(16, Math.floor(maxConnections / 4)),
    reserve: Math.max(16, Math.floor(maxConnections / 32)),
  };
}

export type ConnectionRefusal = "max-connections" | "max-connections-per-client";

/** One admitted connection, as its requests are seen (the TLS socket a request arrives on has the same key). */
interface Admitted {
  socket: Socket;
  /** `address:port`, taken at accept (a destroyed socket no longer says its peer). */
  key: string;
  client: string;
  /** Requests in flight; -1 once upgraded (a tunnel is never idle). */
  active: number;
  /** Let in on the reserve: closing it makes no room in the total. */
  onReserve: boolean;
  /** Still counted (forget() was not called). */
  open: boolean;
}

/** A reserve connection with no traffic for this long is closed. */
export const RESERVE_IDLE_MS = 10_000;

/** An address refused on the reserve gets no reserve connection for this long. */
export const RESERVE_REFUSED_MS = 10_000;

/** Reserve connections one client address may hold. */
export function reservePerClient(reserve: number): number {
  return Math.max(2, Math.floor(reserve / 8));
}

/** Counts for metrics: read when scraped. */
export interface ConnectionCounts {
  open: number;
  onReserve: number;
  refused: Record<ConnectionRefusal, number>;
  /** Kept-alive idle connections closed to make room for a new one. */
  closedIdle: number;
}

export class ConnectionGate {
  readonly limits: ConnectionLimits;
  readonly counts: ConnectionCounts = {
    open: 0,
    onReserve: 0,
    refused: { "max-connections": 0, "max-connections-per-client": 0 },
    closedIdle: 0,
  };
  private readonly perClient = new Map<string, number>();
  private readonly admitted = new Map<string, Admitted>();
  /** Kept-alive connections with nothing in flight, longest idle first (Map order is insertion order). */
  private readonly idle = new Map<string, Admitted>();
  private readonly reservedPerClient = new Map<string, number>();
  /** `address:port` of the connections let in on the reserve (the TLS socket the request sees has the same). */
  private readonly reserved = new Set<string>();
  /** Client addresses refused on the reserve, with when they may have a reserve connection again. */
  private readonly refusedUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(limits: ConnectionLimits, options: { now?: () => number } = {}) {
    this.limits = limits;
    this.now = options.now ?? Date.now;
  }

  /** A request on a reserve connection was refused: its address gets no reserve connection for a while. */
  refusedOnReserve(socket: Socket | undefined): void {
    if (!socket?.remoteAddress) return;
    const now = this.now();
    // Bounded by the reserve's own churn; expired entries go once there are many.
    if (this.refusedUntil.size >= 4 * Math.max(this.limits.reserve, 256)) {
      for (const [client, until] of this.refusedUntil) if (until <= now) this.refusedUntil.delete(client);
    }
    this.refusedUntil.set(clientKey(socket.remoteAddress), now + RESERVE_REFUSED_MS);
  }

  /** Puts the gate in front of the server's own connection handling (for a TLS server: the handshake). */
  install(server: Server): void {
    const handlers = server.listeners("connection");
    if (handlers.length !== 1) throw new Error(`expected one connection listener, found ${handlers.length}`);
    const [handle] = handlers as ((socket: Socket) => void)[];
    server.removeListener("connection", handle);
    server.on("connection", (socket: Socket) => {
      if (this.admit(socket)) handle.call(server, socket);
      else socket.destroy();
    });
    server.prependListener("request", (request: IncomingMessage, response: ServerResponse) =>
      this.requestStarted(request.socket, response),
    );
    // Only where upgrades are taken: a listener is what makes Node hand them over instead of answering them.
    if (server.listenerCount("upgrade") > 0) {
      server.prependListener("upgrade", (request: IncomingMessage) => this.upgraded(request.socket));
    }
  }

  private requestStarted(socket: Socket, response: ServerResponse): void {
    const connection = this.admitted.get(socketKey(socket));
    if (!connection || connection.active < 0) return;
    connection.active++;
    this.idle.delete(connection.key);
    response.once("close", () => {
      if (connection.active <= 0 || --connection.active > 0 || !connection.open) return;
      this.idle.set(connection.key, connection);
    });
  }

  private upgraded(socket: Socket): void {
    const connection = this.admitted.get(socketKey(socket));
    if (!connection) return;
    connection.active = -1;
    this.idle.delete(connection.key);
  }

  /** Closes the connection idle longest: `client`'s own, or anyone's not on the reserve; false when there is none. */
  private closeIdle(client?: string): boolean {
    for (const connection of this.idle.values()) {
      if (client === undefined ? connection.onReserve : connection.client !== client) continue;
      this.forget(connection);
      connection.socket.destroy();
      this.counts.closedIdle++;
      return true;
    }
    return false;
  }

  /** Whether a request arrived on a connection let in on the reserve (one request; probes and privileged only). */
  onReserve(socket: Socket | undefined): boolean {
    return this.reserved.size > 0 && socket !== undefined && this.reserved.has(socketKey(socket));
  }

  /** Counts the connection in, or says no. */
  admit(socket: Socket): boolean {
    const { maxConnections, maxPerClient, reserve } = this.limits;
    const client = clientKey(socket.remoteAddress);
    const fromClient = this.perClient.get(client) ?? 0;
    if (maxPerClient > 0 && fromClient >= maxPerClient && !this.closeIdle(client)) {
      return this.refuse("max-connections-per-client");
    }
    const full = maxConnections > 0 && this.counts.open - this.counts.onReserve >= maxConnections && !this.closeIdle();
    const reservedByClient = this.reservedPerClient.get(client) ?? 0;
    if (
      full &&
      (this.counts.onReserve >= reserve ||
        reservedByClient >= reservePerClient(reserve) ||
        this.refusedRecently(client))
    ) {
      return this.refuse("max-connections");
    }
    const connection: Admitted = { socket, key: socketKey(socket), client, active: 0, onReserve: full, open: true };
    this.counts.open++;
    increment(this.perClient, client, 1);
    this.admitted.set(connection.key, connection);
    if (full) {
      this.counts.onReserve++;
      this.reserved.add(connection.key);
      increment(this.reservedPerClient, client, 1);
      socket.setTimeout(RESERVE_IDLE_MS, () => socket.destroy());
    }
    socket.once("close", () => this.forget(connection));
    return true;
  }

  /** Takes a connection out of the counts (once: when it closes, or at once when closed to make room). */
  private forget(connection: Admitted): void {
    if (!connection.open) return;
    connection.open = false;
    this.counts.open--;
    increment(this.perClient, connection.client, -1);
    this.admitted.delete(connection.key);
    this.idle.delete(connection.key);
    if (connection.onReserve) {
      this.counts.onReserve--;
      this.reserved.delete(connection.key);
      increment(this.reservedPerClient, connection.client, -1);
    }
  }

  private refusedRecently(client: string): boolean {
    const until = this.refusedUntil.get(client);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.refusedUntil.delete(client);
    return false;
  }

  private refuse(reason: ConnectionRefusal): false {
    this.counts.refused[reason]++;
    return false;
  }
}

/** Adds `by` to a count kept in a map, dropping counts that reach 0. */
function increment(counts: Map<string, number>, key: string, by: number): void {
  const value = (counts.get(key) ?? 0) + by;
  if (value > 0) counts.set(key, value);
  else counts.delete(key);
}

function socketKey(socket: Socket): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}
