// The platform's two passthrough routes for connected clusters:
//   /cluster-agent/<cluster>/tunnel   an agent's upgrade: a key with the role `agent` of this cluster (and the
//                                     rights behind it) opens the cluster's tunnel on this replica, as often as
//                                     tunnel-open-limit.ts allows;
//   /kubernetes/cluster/<cluster>/... kubectl and client libraries through the platform: authorized here
//                                     (cluster-access.ts), sent over the tunnel with the caller's identity (the agent
//                                     impersonates it), or relayed to the replica holding the tunnel.

import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { errors, isStatusError } from "../../apimachinery/errors.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { hostGroupName, hostUserName } from "../../apis/management/v1/host-identity.ts";
import { SCOPE_ROLES } from "../../apis/management/v1/ownedaccesskey-schema.ts";
import { isLongRunning } from "../../http/flow-control/classify.ts";
import type { PassthroughCall, PassthroughRoute } from "../../http/passthrough.ts";
import { parseRequestInfo } from "../../http/request-info.ts";
import { forwardRequest, forwardUpgrade } from "../../http/tunnel/tunnel-forward.ts";
import {
  GROUP_HEADER,
  ISSUER_HEADER,
  PROXY_PREFIX,
  TUNNEL_ID_HEADER,
  TUNNEL_PROTOCOL,
  USER_HEADER,
} from "../../http/tunnel/tunnel-protocol.ts";
import { acceptTunnel } from "../../http/tunnel/tunnel-session.ts";
import { principalOf } from "../../identity/principal.ts";
import { AGENT_TUNNEL } from "../../identity/scope.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import { authorizeClusterRequest } from "./cluster-access.ts";
import { ReplicaRelay, wasRelayed } from "./replica-relay.ts";
import type { SpaceIndex } from "./space-index.ts";
import type { TunnelDirectory } from "./tunnel-directory.ts";
import type { TunnelHub } from "./tunnel-hub.ts";
import { TunnelOpenLimit } from "./tunnel-open-limit.ts";

export const CLUSTER_PROXY_PREFIX = "/kubernetes/cluster/";
export const AGENT_TUNNEL_PREFIX = "/cluster-agent/";
const CLUSTERS = { group: GROUP, resource: "clusters" };
/** What a long-running request's URL contains (flow-control/classify.ts isLongRunning decides). */
const MAYBE_LONG_RUNNING = /[?&]watch=|\/watch\/|\/(attach|exec|log|portforward|proxy)(\/|\?|$)/;

export interface ClusterRoutesOptions {
  registry: Registry;
  hub: TunnelHub;
  directory: TunnelDirectory;
  spaces: SpaceIndex;
  /** The iss of direct cluster endpoint tokens, told to agents so they verify them offline. */
  issuer(): string;
  /** This replica's base URL (a record naming it is stale: the tunnel is gone). */
  self(): string;
  /** How often a cluster's tunnel may open here (default: TunnelOpenLimit's). */
  tunnelOpens?: TunnelOpenLimit;
  logger?: Logger;
}

export interface ClusterRoutes {
  routes: PassthroughRoute[];
  close(): void;
}

/** `/kubernetes/cluster/<name><rest>` -> name and rest ("/" at least), or undefined. */
function proxyTarget(url: string): { cluster: string; rest: string } | undefined {
  const after = url.slice(CLUSTER_PROXY_PREFIX.length);
  const end = after.search(/[/?]/);
  const cluster = decodeURIComponent(end === -1 ? after : after.slice(0, end));
  if (!cluster) return undefined;
  const rest = end === -1 ? "/" : after.slice(end);
  return { cluster, rest: rest.startsWith("?") ? `/${rest}` : rest };
}

/** The identity the agent impersonates: the caller's user (or team, or key subject) and its teams. */
function identityHeaders(call: PassthroughCall): Record<string, string | string[]> {
  const principal = principalOf(call.user);
  if (!principal) throw errors.forbiddenPath("only platform users, teams and their keys reach connected clusters");
  const groups = principal.teams.map((team) => hostGroupName(team.name));
  if (principal.kind === "Team") groups.push(hostGroupName(principal.name));
  return { [USER_HEADER]: hostUserName(principal.kind, principal.name), [GROUP_HEADER]: [...new Set(groups)] };
}

export function clusterRoutes(options: ClusterRoutesOptions): ClusterRoutes {
  const { hub, directory, spaces, logger } = options;
  const relay = new ReplicaRelay();
  const tunnelOpens = options.tunnelOpens ?? new TunnelOpenLimit();

  const clusterExists = async (name: string) => {
    try {
      await options.registry
        .genericStore(GROUP, "clusters")
        ?.get(systemContext("system:cluster-proxy", "proxy"), { name });
      return true;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return false;
      throw error;
    }
  };

  /** Why nothing answers for a cluster: it does not exist (404), or its agent is not connected (503). */
  const unavailable = async (cluster: string) =>
    (await clusterExists(cluster))
      ? errors.serviceUnavailable(
          `cluster "${cluster}" is not connected: its agent is offline (see kubectl get cluster ${cluster})`,
        )
      : errors.notFound(CLUSTERS, cluster);

  /** The tunnel here, or the record of the replica holding it (never for a request relayed here already). */
  const locate = async (call: PassthroughCall, cluster: string) => {
    const agent = hub.get(cluster);
    if (agent) return { agent };
    if (wasRelayed(call.request)) return {};
    const record = await directory.lookup(cluster);
    return record && record.replica !== options.self() ? { record } : {};
  };

  /** A proxied request, authorized: where it goes (this replica's tunnel or the holder's) and as what. */
  const route = async (call: PassthroughCall) => {
    const target = proxyTarget(call.url);
    if (!target) throw errors.pathNotFound();
    await authorizeClusterRequest(call, target.cluster, target.rest, spaces);
    const { agent, record } = await locate(call, target.cluster);
    if (!agent && !record) throw await unavailable(target.cluster);
    const forwarded = agent && {
      session: agent.session,
      request: { path: PROXY_PREFIX + target.rest, request: call.request, headers: identityHeaders(call) },
    };
    return { forwarded, record };
  };

  const proxy: PassthroughRoute = {
    matches: (url) => url.startsWith(CLUSTER_PROXY_PREFIX),
    longRunning(method, url) {
      if (!MAYBE_LONG_RUNNING.test(url)) return false; // most requests: no parsing
      try {
        const target = proxyTarget(url);
        return target !== undefined && isLongRunning(parseRequestInfo(method, target.rest));
      } catch {
        return false; // an undecodable path: refused later, after authentication
      }
    },
    // A relayed watch or exec ends once its caller changes or may no longer reach the cluster (passthrough.ts).
    async authorizeAgain(call) {
      const target = proxyTarget(call.url);
      if (!target) throw errors.pathNotFound();
      await authorizeClusterRequest(call, target.cluster, target.rest, spaces);
    },
    async serve(call, response: ServerResponse) {
      const { forwarded, record } = await route(call);
      if (forwarded) return forwardRequest(forwarded.session, forwarded.request, response);
      return relay.request(record!, call.request, response);
    },
    async upgrade(call, socket: Duplex, head: Buffer) {
      const { forwarded, record } = await route(call);
      if (forwarded) return forwardUpgrade(forwarded.session, forwarded.request, socket, head);
      return relay.upgrade(record!, call.request, socket, head);
    },
  };

  const tunnel: PassthroughRoute = {
    matches: (url) => url.startsWith(AGENT_TUNNEL_PREFIX),
    async serve() {
      throw errors.badRequest(`the agent's tunnel is an HTTP upgrade to ${TUNNEL_PROTOCOL}`);
    },
    async upgrade(call, socket, head) {
      const match = /^\/cluster-agent\/([a-z0-9][-a-z0-9]*)\/tunnel$/.exec(call.url.split("?")[0]);
      if (!match) throw errors.pathNotFound();
      if (call.request.headers.upgrade !== TUNNEL_PROTOCOL) {
        throw errors.badRequest(`the agent's tunnel speaks ${TUNNEL_PROTOCOL}`);
      }
      const cluster = match[1];
      await authorizeTunnel(call, cluster);
      if (!(await clusterExists(cluster))) throw errors.notFound(CLUSTERS, cluster);
      const wait = tunnelOpens.take(cluster);
      if (wait > 0) {
        throw errors.tooManyRequests(`the tunnel of cluster "${cluster}" opened too often: try again later`, wait);
      }
      const id = randomUUID();
      const session = await acceptTunnel(socket, head, { [ISSUER_HEADER]: options.issuer(), [TUNNEL_ID_HEADER]: id });
      const key = principalOf(call.user)?.key;
      const agent = hub.add(cluster, session, id, key && { name: key.name, uid: key.uid });
      logger?.info({ cluster, tunnel: id, remote: call.request.socket.remoteAddress }, "cluster agent connected");
      await agent.closed;
      logger?.info({ cluster, tunnel: id }, "cluster agent disconnected");
      return 101;
    },
  };

  return { routes: [tunnel, proxy], close: () => relay.close() };
}

/**
 * Only a key carrying the role `agent` for this cluster opens its tunnel (whoever else may write the Cluster
 * cannot put a fake agent in front of its users), and the key's owner must hold that right too.
 */
async function authorizeTunnel(call: PassthroughCall, cluster: string): Promise<void> {
  const roles = principalOf(call.user)?.key.scope?.roles ?? [];
  const agentRole = roles.some(
    (role) =>
      role.role === SCOPE_ROLES.agent &&
      (!role.clusters?.length || role.clusters.includes("*") || role.clusters.includes(cluster)),
  );
  const decision = agentRole
    ? await call.authorizer.authorize({
        user: call.user,
        ...AGENT_TUNNEL,
        group: GROUP,
        name: cluster,
        resourceRequest: true,
      })
    : { allowed: false, reason: `only a key with the role "${SCOPE_ROLES.agent}" for this cluster connects its agent` };
  if (!decision.allowed) {
    throw errors.forbidden(
      CLUSTERS,
      cluster,
      `User "${call.user.name}" cannot connect the agent of the cluster${decision.reason ? `: ${decision.reason}` : ""}`,
    );
  }
}
