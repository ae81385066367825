// Who may reach a connected cluster's API through the platform. A caller allowed to `use` the Cluster (admin, owner,
// an access rule with "use", within its key's scope.clusters) reaches all of it; the host's RBAC decides the rest.
// A member of a space on the cluster (anyone who may get the SpaceInstance: project members, scope.spaces keys)
// reaches that space's namespace, plus discovery so kubectl works. Everything else is 403, before the request
// reaches the agent. Clients never impersonate through the platform: the platform says who they are.

import { errors } from "../../apimachinery/errors.ts";
import { USE_VERB } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import type { PassthroughCall } from "../../http/passthrough.ts";
import { parseRequestInfo } from "../../http/request-info.ts";
import { sentImpersonation } from "../../http/tunnel/tunnel-protocol.ts";
import { DISCOVERY_URLS } from "../../identity/scope.ts";
import type { SpaceEntry, SpaceIndex } from "./space-index.ts";

const CLUSTERS = { group: GROUP, resource: "clusters" };

const isDiscovery = (path: string) =>
  DISCOVERY_URLS.some((pattern) => (pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern));

async function maySee(call: PassthroughCall, space: SpaceEntry): Promise<boolean> {
  const decision = await call.authorizer.authorize({
    user: call.user,
    verb: "get",
    group: GROUP,
    resource: "spaceinstances",
    namespace: space.projectNamespace,
    name: space.name,
    resourceRequest: true,
  });
  return decision.allowed;
}

/** Throws the 403 that says why when the caller may not send this request to the cluster. */
export async function authorizeClusterRequest(
  call: PassthroughCall,
  cluster: string,
  path: string,
  spaces: SpaceIndex,
): Promise<void> {
  const impersonation = sentImpersonation(call.request.headers);
  if (impersonation) {
    throw errors.forbidden(
      CLUSTERS,
      cluster,
      `the header ${impersonation} is not accepted through the platform: requests reach the cluster as the platform user who sends them`,
    );
  }
  const use = await call.authorizer.authorize({
    user: call.user,
    verb: USE_VERB,
    ...CLUSTERS,
    name: cluster,
    resourceRequest: true,
  });
  if (use.allowed) return;
  const bare = path.split("?")[0] || "/";
  const info = parseRequestInfo(call.request.method ?? "GET", bare);
  const namespace = info.resourceRequest ? info.namespace : undefined;
  if (namespace) {
    const space = spaces.find(cluster, namespace);
    if (space && (await maySee(call, space))) return;
  } else if (!info.resourceRequest && isDiscovery(info.path)) {
    for (const space of spaces.on(cluster)) if (await maySee(call, space)) return;
  }
  const where = namespace ? ` (nor a space in its namespace "${namespace}")` : "";
  throw errors.forbidden(
    CLUSTERS,
    cluster,
    `User "${call.user.name}" cannot use the cluster${where}${use.reason ? `: ${use.reason}` : ""}`,
  );
}
