// What `virtualcluster cluster connect` does on the host, once, with the administrator's kubeconfig: the agent's
// namespace and ServiceAccount, the ClusterRoles and bindings of host-rbac.ts (created or updated), and a token of
// the ServiceAccount (TokenRequest, one year: the agent runs outside a Pod here; in a Pod its projected token is
// used instead) in a kubeconfig for the agent. The administrator's credentials are used for nothing else and kept
// nowhere.

import type { KubeObject } from "../apimachinery/types.ts";
import { RBAC_GROUP } from "../apis/rbac/v1/common.ts";
import type { KubeAccess } from "../virtualcluster/kube/kube-access.ts";
import { KubeApiError } from "../virtualcluster/kube/kube-api-error.ts";
import { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import {
  AGENT_NAMESPACE,
  AGENT_SERVICE_ACCOUNT,
  agentClusterRbac,
  MANAGED_BY_AGENT,
  MANAGED_BY_LABEL,
} from "./host-rbac.ts";

/** A year: a long-running process outside a Pod keeps one token (rotate by connecting again). */
export const AGENT_TOKEN_SECONDS = 365 * 24 * 3600;

const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_AGENT };

async function ensure(http: KubeHttp, collection: string, object: KubeObject, replace: boolean): Promise<void> {
  const name = object.metadata.name ?? "";
  try {
    await http.request({ method: "POST", path: collection, body: object });
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.code !== 409) throw error;
    if (!replace) return;
    const current = await http.request<KubeObject>({ method: "GET", path: `${collection}/${name}` });
    await http.request({
      method: "PUT",
      path: `${collection}/${name}`,
      body: { ...object, metadata: { ...object.metadata, resourceVersion: current.metadata.resourceVersion } },
    });
  }
}

export interface HostSetupResult {
  /** The ServiceAccount's token. */
  token: string;
  /** The host's Kubernetes version. */
  kubernetesVersion: string;
}

/** Creates (or brings up to date) everything the agent needs on the host, as the administrator. */
export async function setUpHost(admin: KubeAccess): Promise<HostSetupResult> {
  const http = new KubeHttp(admin, { userAgent: "virtualcluster-cluster-connect" });
  try {
    const version = await http.request<{ gitVersion?: string }>({ method: "GET", path: "/version" });
    await ensure(
      http,
      "/api/v1/namespaces",
      { apiVersion: "v1", kind: "Namespace", metadata: { name: AGENT_NAMESPACE, labels } },
      false,
    );
    await ensure(
      http,
      `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts`,
      {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: AGENT_SERVICE_ACCOUNT, namespace: AGENT_NAMESPACE, labels },
      },
      false,
    );
    const rbac = agentClusterRbac();
    for (const role of rbac.roles) await ensure(http, `/apis/${RBAC_GROUP}/v1/clusterroles`, role, true);
    for (const binding of rbac.bindings)
      await ensure(http, `/apis/${RBAC_GROUP}/v1/clusterrolebindings`, binding, true);
    const answer = await http.request<{ status?: { token?: string } }>({
      method: "POST",
      path: `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${AGENT_SERVICE_ACCOUNT}/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [], expirationSeconds: AGENT_TOKEN_SECONDS },
      },
    });
    const token = answer.status?.token;
    if (!token) throw new Error("the host cluster returned no token for the agent's ServiceAccount");
    return { token, kubernetesVersion: version.gitVersion ?? "" };
  } finally {
    http.close();
  }
}
