// Project secrets delivered as Kubernetes Secrets (ProjectSecret spec.deliverTo): into a space's namespace on the
// host, or into a virtual cluster through its own API. The agent makes each Secret the platform lists, labelled
// with the agent and the ProjectSecret's name, keeps its data equal to the platform's, and deletes those it made
// that are no longer listed. A Secret of the same name that the agent did not make is never replaced: the answer
// names it instead. Messages name Secrets, never a value.

import type { KubeObject } from "../apimachinery/types.ts";
import type { DeliveredSecret } from "../http/tunnel/agent-api.ts";
import { KubeApiError } from "../virtualcluster/kube/kube-api-error.ts";
import type { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import { MANAGED_BY_AGENT, MANAGED_BY_LABEL } from "./host-rbac.ts";

/** On a delivered Secret: the ProjectSecret it holds. */
export const PROJECT_SECRET_LABEL = "management.platform.sh/project-secret";

const SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_AGENT},${PROJECT_SECRET_LABEL}`;
const code = (error: unknown) => (error instanceof KubeApiError ? error.code : 0);
const sameData = (a: Record<string, string> = {}, b: Record<string, string> = {}) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

export interface SecretScope {
  /** Every delivered Secret goes here (a space); absent: each names its namespace (a virtual cluster). */
  namespace?: string;
  /** Creates a missing namespace (a virtual cluster's, where the user names any). */
  createNamespaces?: boolean;
}

/**
 * Makes the delivered Secrets in scope exactly `wanted`; resolves with what could not be delivered (empty when
 * all are in place).
 */
export async function syncDeliveredSecrets(
  http: KubeHttp,
  wanted: readonly DeliveredSecret[],
  scope: SecretScope,
): Promise<string[]> {
  const problems: string[] = [];
  const place = (secret: DeliveredSecret) => scope.namespace ?? secret.namespace ?? "default";
  const listPath = scope.namespace ? `/api/v1/namespaces/${scope.namespace}/secrets` : "/api/v1/secrets";
  const made = await http.request<{ items: KubeObject[] }>({
    method: "GET",
    path: listPath,
    query: { labelSelector: SELECTOR },
  });
  const stale = new Map(made.items.map((item) => [`${item.metadata.namespace}/${item.metadata.name}`, item]));
  for (const secret of wanted) {
    const namespace = place(secret);
    stale.delete(`${namespace}/${secret.name}`);
    const problem = await putSecret(http, namespace, secret, scope.createNamespaces === true);
    if (problem) problems.push(problem);
  }
  for (const item of stale.values()) {
    await http
      .request({
        method: "DELETE",
        path: `/api/v1/namespaces/${item.metadata.namespace}/secrets/${item.metadata.name}`,
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: item.metadata.uid } },
      })
      .catch((error: unknown) => {
        if (code(error) !== 404 && code(error) !== 409) throw error;
      });
  }
  return problems;
}

async function putSecret(
  http: KubeHttp,
  namespace: string,
  secret: DeliveredSecret,
  createNamespace: boolean,
): Promise<string | undefined> {
  const path = `/api/v1/namespaces/${namespace}/secrets`;
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_AGENT, [PROJECT_SECRET_LABEL]: secret.projectSecret };
  const body = {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: { name: secret.name, namespace, labels },
    data: secret.data,
  };
  let current: KubeObject | undefined;
  try {
    current = await http.request<KubeObject>({ method: "GET", path: `${path}/${secret.name}` });
  } catch (error) {
    if (code(error) !== 404) throw error;
  }
  if (!current) {
    try {
      await http.request({ method: "POST", path, body });
    } catch (error) {
      if (code(error) !== 404 || !createNamespace) throw error;
      await http
        .request({
          method: "POST",
          path: "/api/v1/namespaces",
          body: { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
        })
        .catch((created: unknown) => {
          if (code(created) !== 409) throw created;
        });
      await http.request({ method: "POST", path, body });
    }
    return undefined;
  }
  const currentLabels = current.metadata.labels ?? {};
  if (currentLabels[MANAGED_BY_LABEL] !== MANAGED_BY_AGENT || !currentLabels[PROJECT_SECRET_LABEL]) {
    return `Secret ${namespace}/${secret.name} already exists and was not made by the platform: it is left as it is`;
  }
  const data = (current as KubeObject & { data?: Record<string, string> }).data;
  if (sameData(data, secret.data) && currentLabels[PROJECT_SECRET_LABEL] === secret.projectSecret) return undefined;
  await http.request({
    method: "PUT",
    path: `${path}/${secret.name}`,
    body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion } },
  });
  return undefined;
}
