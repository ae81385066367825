// What `virtualcluster connect cluster NAME` asks of the platform: a kubeconfig for a connected cluster, as the
// logged-in user. Through the platform (default): the server is {platform}/kubernetes/cluster/NAME and the
// credential a new access key of the user scoped to this one cluster (it expires with --ttl). Direct (--direct): the
// server is the agent's direct endpoint (its CA from the Cluster's status) and the credential a
// DirectClusterEndpointToken scoped to the cluster, which keeps working while the platform is down.

import { buildKubeconfig } from "../pki/kubeconfig.ts";
import { LifecycleError } from "../virtualcluster/lifecycle/lifecycle-error.ts";
import { API_GROUP_PATH, type PlatformClient } from "../virtualcluster/lifecycle/platform-client.ts";
import { type RunStep, runQuietly } from "../virtualcluster/lifecycle/run-step.ts";

export interface ClusterKubeconfigOptions {
  name: string;
  platform: PlatformClient;
  direct?: boolean;
  /** Life of the key or token in seconds. */
  ttlSeconds: number;
  step?: RunStep;
}

interface ClusterObject {
  status?: {
    online?: boolean;
    lastHeartbeatTime?: string;
    directEndpoint?: { url?: string; certificateAuthority?: string };
  };
}

export interface ClusterKubeconfig {
  kubeConfig: string;
  server: string;
  online: boolean;
}

export async function requestClusterKubeconfig(options: ClusterKubeconfigOptions): Promise<ClusterKubeconfig> {
  const step = options.step ?? runQuietly;
  const { name, platform } = options;
  const cluster = await step(`Looking up cluster ${name}`, () =>
    platform.request<ClusterObject>("GET", `${API_GROUP_PATH}/clusters/${name}`),
  );
  const scope = { clusters: [{ cluster: name }] };
  const contextName = `virtualcluster-platform_cluster_${name}`;
  const online = cluster.status?.online === true;
  if (options.direct) {
    const endpoint = cluster.status?.directEndpoint;
    if (!endpoint?.url) {
      throw new LifecycleError(
        `cluster ${name} has no direct endpoint (its agent runs without one, or never connected)`,
      );
    }
    const token = await step("Getting a direct cluster endpoint token", () =>
      platform.request<{ status?: { token?: string } }>("POST", `${API_GROUP_PATH}/directclusterendpointtokens`, {
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "DirectClusterEndpointToken",
          spec: { ttl: options.ttlSeconds, scope },
        },
      }),
    );
    if (!token.status?.token) throw new LifecycleError("the platform returned no token");
    return {
      kubeConfig: buildKubeconfig({
        name: contextName,
        server: endpoint.url,
        certificateAuthorityPem: endpoint.certificateAuthority,
        user: { token: token.status.token },
      }),
      server: endpoint.url,
      online,
    };
  }
  const key = await step(`Getting an access key for cluster ${name}`, () =>
    platform.request<{ spec?: { key?: string } }>("POST", `${API_GROUP_PATH}/ownedaccesskeys`, {
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { generateName: `kubectl-cluster-${name.slice(0, 40)}-` },
        spec: {
          type: "User",
          displayName: `kubectl for cluster ${name}`,
          description: `Made by virtualcluster connect cluster ${name}; reaches only this cluster.`,
          ttl: options.ttlSeconds,
          scope,
        },
      },
    }),
  );
  if (!key.spec?.key) throw new LifecycleError("the platform returned no access key");
  const login = platform.login;
  const server = `${login.host.replace(/\/+$/, "")}/kubernetes/cluster/${name}`;
  return {
    kubeConfig: buildKubeconfig({
      name: contextName,
      server,
      certificateAuthorityPem: login.certificateAuthorityData
        ? Buffer.from(login.certificateAuthorityData, "base64").toString("utf8")
        : undefined,
      user: { token: key.spec.key },
    }),
    server,
    online,
  };
}
