// The agents connected to this replica: one tunnel (an HTTP/2 client session) per cluster. A newer tunnel of the
// same cluster replaces the older one (an agent that reconnected before the old connection was noticed dead).
// Listeners hear of every connect and disconnect: the heartbeats, the tunnel directory and the workload
// reconciler follow them.

import { randomUUID } from "node:crypto";
import type { ClientHttp2Session } from "node:http2";

export interface ConnectedAgent {
  cluster: string;
  /** Identifies this tunnel (Cluster status.connection.id). */
  id: string;
  session: ClientHttp2Session;
  since: Date;
  /** The access key the agent connected with (its object name and uid): revoking it ends the tunnel. */
  key?: { name: string; uid: string };
  /** Resolves when the tunnel closed. */
  closed: Promise<void>;
}

export interface TunnelListener {
  connected?(agent: ConnectedAgent): void;
  disconnected?(agent: ConnectedAgent): void;
}

export class TunnelHub {
  readonly #agents = new Map<string, ConnectedAgent>();
  readonly #listeners = new Set<TunnelListener>();

  listen(listener: TunnelListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The tunnel of a cluster, if its agent is connected to this replica. */
  get(cluster: string): ConnectedAgent | undefined {
    return this.#agents.get(cluster);
  }

  all(): ConnectedAgent[] {
    return [...this.#agents.values()];
  }

  /** Takes a new tunnel; the cluster's previous one (if any) is closed. */
  add(
    cluster: string,
    session: ClientHttp2Session,
    id: string = randomUUID(),
    key?: { name: string; uid: string },
  ): ConnectedAgent {
    let done: () => void = () => {};
    const agent: ConnectedAgent = {
      cluster,
      id,
      session,
      since: new Date(),
      key,
      closed: new Promise((resolve) => {
        done = resolve;
      }),
    };
    const previous = this.#agents.get(cluster);
    this.#agents.set(cluster, agent);
    const gone = () => {
      if (this.#agents.get(cluster) === agent) this.#agents.delete(cluster);
      done();
      for (const listener of this.#listeners) listener.disconnected?.(agent);
    };
    session.once("close", gone);
    // Errors end in close; a GOAWAY from the agent means it is leaving.
    session.on("error", () => session.destroy());
    session.once("goaway", () => session.destroy());
    previous?.session.destroy();
    for (const listener of this.#listeners) listener.connected?.(agent);
    return agent;
  }

  /** Closes every tunnel (shutdown): the agents reconnect to another replica. */
  async close(): Promise<void> {
    const agents = this.all();
    for (const agent of agents) agent.session.destroy();
    await Promise.all(agents.map((agent) => agent.closed));
  }
}
