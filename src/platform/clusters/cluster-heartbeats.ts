// What a replica reports about the clusters whose agents it holds: when an agent connects and then every heartbeat,
// it asks the agent for its info over the tunnel and writes the Cluster's status (online, phase Ready, heartbeat,
// versions, the direct endpoint, the spaces and virtual clusters on it, which tunnel is current) and publishes the
// tunnel in the directory. An agent that does not answer a heartbeat loses its tunnel (it reconnects). When a tunnel
// closes the cluster goes offline at once — unless a newer tunnel (here or on another replica) is current already.
// Clusters whose replica died without saying so go offline through the liveness check (instance-liveness.ts). A
// tunnel whose access key no longer authenticates (deleted, disabled, expired, revoked) is closed at the next
// heartbeat: authentication happened when it opened, and a tunnel outlives no revocation by more than a heartbeat.
// The agent's info is untrusted (a Cluster's owner can run an agent of their own): it is normalised and bounded
// (src/http/tunnel/agent-answers.ts) before anything of it is written, and what it lacks is removed from the status.

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { Cluster, ClusterStatus } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { normaliseAgentInfo } from "../../http/tunnel/agent-answers.ts";
import { type AgentInfo, callAgent } from "../../http/tunnel/agent-api.ts";
import type { Registry } from "../../registry/registry.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import { formatTimestamp } from "../../registry/time.ts";
import type { TunnelDirectory } from "./tunnel-directory.ts";
import type { ConnectedAgent, TunnelHub } from "./tunnel-hub.ts";

const MANAGER = "virtualcluster-platform-clusters";
export const DEFAULT_CLUSTER_HEARTBEAT_MS = 30_000;
const INFO_TIMEOUT_MS = 10_000;

export interface ClusterHeartbeatsOptions {
  registry: Registry;
  hub: TunnelHub;
  directory: TunnelDirectory;
  /** This replica, as status.connection.replica names it. */
  replica(): string;
  /** Why an access key would not authenticate now (deleted, disabled, expired, revoked); undefined when it would. */
  keyProblem(name: string, uid: string): string | undefined;
  intervalMs?: number;
  logger?: Logger;
}

const context = () => systemContext("system:cluster-heartbeats", MANAGER);

export class ClusterHeartbeats {
  readonly #options: ClusterHeartbeatsOptions;
  #timer?: NodeJS.Timeout;
  #unlisten?: () => void;
  /** Offline reports under way: shutdown waits for them (the store closes after). */
  readonly #pending = new Set<Promise<void>>();
  /** Agents with a periodic heartbeat under way. */
  readonly #beating = new WeakSet<ConnectedAgent>();

  constructor(options: ClusterHeartbeatsOptions) {
    this.#options = options;
  }

  start(): void {
    this.#unlisten = this.#options.hub.listen({
      connected: (agent) => void this.beat(agent, true),
      disconnected: (agent) => {
        const done = this.#disconnected(agent).finally(() => this.#pending.delete(done));
        this.#pending.add(done);
      },
    });
    this.#timer = setInterval(() => {
      // One heartbeat per agent at a time: an agent slow to answer (up to INFO_TIMEOUT_MS) misses beats instead of
      // having calls pile up when the interval is shorter than that.
      for (const agent of this.#options.hub.all()) if (!this.#beating.has(agent)) void this.#beatOnce(agent);
    }, this.#options.intervalMs ?? DEFAULT_CLUSTER_HEARTBEAT_MS);
    this.#timer.unref();
  }

  /** Stops beating; resolves once the offline reports of closed tunnels are written. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.allSettled(this.#pending);
    this.#unlisten?.();
  }

  #store(): GenericStore {
    const store = this.#options.registry.genericStore(GROUP, "clusters");
    if (!store) throw new Error("clusters are not registered");
    return store;
  }

  async #beatOnce(agent: ConnectedAgent): Promise<void> {
    this.#beating.add(agent);
    try {
      await this.beat(agent, false);
    } finally {
      this.#beating.delete(agent);
    }
  }

  /** One heartbeat of a connected agent: its info into the cluster's status. */
  async beat(agent: ConnectedAgent, connecting: boolean): Promise<void> {
    const { logger } = this.#options;
    const revoked = agent.key && this.#options.keyProblem(agent.key.name, agent.key.uid);
    if (revoked) {
      logger?.info(
        { cluster: agent.cluster, reason: revoked },
        "the agent's access key no longer works; closing its tunnel",
      );
      agent.session.destroy();
      return;
    }
    let info: AgentInfo;
    try {
      const answer = await callAgent<unknown>(agent.session, "GET", "/info", undefined, INFO_TIMEOUT_MS);
      if (answer.status !== 200) throw new Error(`the agent answered ${answer.status}`);
      // Anyone who owns the Cluster can run its agent: only what the normaliser keeps reaches the status.
      info = normaliseAgentInfo(answer.body);
    } catch (error) {
      logger?.warn(
        { cluster: agent.cluster, err: String(error) },
        "cluster agent missed its heartbeat; closing its tunnel",
      );
      agent.session.destroy();
      return;
    }
    if (agent.session.closed || agent.session.destroyed) return;
    const now = formatTimestamp(new Date());
    const status: ClusterStatus = {
      phase: "Ready",
      online: true,
      lastHeartbeatTime: now,
      spaces: info.spaces,
      virtualClusters: info.virtualClusters,
    };
    // What the agent did not answer (or answered out of bounds) goes: nothing stays from an earlier heartbeat.
    const patch: Record<string, unknown> = {
      ...status,
      kubernetesVersion: info.kubernetesVersion ?? null,
      agentVersion: info.agentVersion ?? null,
      directEndpoint: info.directEndpoint ?? null,
      usage: info.usage ?? null,
      helmVersion: info.helmVersion ?? null,
    };
    if (connecting) {
      patch.reason = "AgentConnected";
      patch.message = null;
      patch.connection = { id: agent.id, replica: this.#options.replica(), since: formatTimestamp(agent.since) };
    }
    try {
      await this.#store().patch(
        context(),
        { name: agent.cluster, subresource: "status" },
        "merge",
        { status: patch },
        { fieldManager: MANAGER },
      );
      await this.#options.directory.publish(agent);
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") {
        logger?.info({ cluster: agent.cluster }, "the cluster was deleted; closing its agent's tunnel");
        agent.session.destroy();
        return;
      }
      logger?.warn({ cluster: agent.cluster, err: String(error) }, "recording the cluster's heartbeat failed");
    }
  }

  /** Offline, unless another tunnel of the cluster is current by now. */
  async #disconnected(agent: ConnectedAgent): Promise<void> {
    const { logger } = this.#options;
    try {
      await this.#options.directory.withdraw(agent);
      for (;;) {
        const cluster = (await this.#store().get(context(), { name: agent.cluster })) as Cluster;
        if (cluster.status?.connection?.id !== agent.id) return;
        const message = `the agent's connection to ${this.#options.replica()} closed at ${formatTimestamp(new Date())}`;
        try {
          await this.#store().patch(
            context(),
            { name: agent.cluster, subresource: "status" },
            "merge",
            {
              metadata: { resourceVersion: cluster.metadata.resourceVersion },
              status: { online: false, phase: "Offline", reason: "AgentDisconnected", message },
            },
            { fieldManager: MANAGER },
          );
          logger?.info({ cluster: agent.cluster }, message);
          return;
        } catch (error) {
          if (!isStatusError(error) || error.reason !== "Conflict") throw error;
        }
      }
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return;
      logger?.warn({ cluster: agent.cluster, err: String(error) }, "marking the cluster offline failed");
    }
  }
}
