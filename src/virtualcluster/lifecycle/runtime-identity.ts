// The host identity a virtual cluster runs as: its ServiceAccount `vc-<name>` with the Role the upstream chart
// grants (the synced kinds in its own namespace; in multi-namespace mode a ClusterRole that also manages
// namespaces), and a token for it (TokenRequest, one year) in a kubeconfig the runtime uses instead of the
// deployer's credentials. The key Secret in another namespace is readable only through the Secret-reader Role that
// createRBAC makes.

import type { V1PolicyRule } from "@kubernetes/client-node";
import { serviceAccountName } from "../connect/platform-rbac.ts";
import type { HostCluster } from "./host-cluster.ts";
import type { HostClusterEntry } from "./host-kubeconfig.ts";

/** A year: the runtime is a long-running process outside a pod, so nothing would rotate a shorter token. */
export const RUNTIME_TOKEN_SECONDS = 365 * 24 * 3600;

const SYNC_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"];
const SYNCED: V1PolicyRule = {
  apiGroups: [""],
  resources: ["services", "endpoints", "configmaps", "secrets"],
  verbs: SYNC_VERBS,
};
const SYNCED_SLICES: V1PolicyRule = {
  apiGroups: ["discovery.k8s.io"],
  resources: ["endpointslices"],
  verbs: SYNC_VERBS,
};
/** What a virtual cluster's runtime may do in its host namespace: the synced kinds, wherever it is deployed from. */
export const RUNTIME_SYNC_RULES: readonly V1PolicyRule[] = [SYNCED, SYNCED_SLICES];
const NAMESPACES: V1PolicyRule = {
  apiGroups: [""],
  resources: ["namespaces"],
  verbs: ["get", "list", "watch", "create", "delete"],
};

/** Name of the runtime's Role (namespaced) or ClusterRole (multi-namespace mode) and of its binding. */
export function runtimeRoleName(name: string, namespace: string, multiNamespace: boolean): string {
  return multiNamespace ? `vc-${name}-v-${namespace}` : `vc-${name}`;
}

export interface RuntimeIdentityOptions {
  name: string;
  namespace: string;
  multiNamespace: boolean;
  labels: Record<string, string>;
}

/** Creates or updates the Role (or ClusterRole) and its binding to the ServiceAccount. */
export async function ensureRuntimeRbac(host: HostCluster, options: RuntimeIdentityOptions): Promise<void> {
  const { name, namespace, multiNamespace, labels } = options;
  const roleName = runtimeRoleName(name, namespace, multiNamespace);
  const rules = multiNamespace ? [...RUNTIME_SYNC_RULES, NAMESPACES] : [...RUNTIME_SYNC_RULES];
  const subjects = [{ kind: "ServiceAccount", name: serviceAccountName(name), namespace }];
  const roleRef = {
    apiGroup: "rbac.authorization.k8s.io",
    kind: multiNamespace ? "ClusterRole" : "Role",
    name: roleName,
  };
  const what = `${roleRef.kind} ${multiNamespace ? "" : `${namespace}/`}${roleName}`;
  await host.call(`create the ${what} of the virtual cluster's ServiceAccount`, async () => {
    const rbac = host.rbac;
    if (multiNamespace) {
      const role = { metadata: { name: roleName, labels }, rules };
      const binding = { metadata: { name: roleName, labels }, roleRef, subjects };
      const found = await rbac.readClusterRole({ name: roleName }).catch(() => undefined);
      if (found)
        await rbac.replaceClusterRole({
          name: roleName,
          body: { ...role, metadata: { ...role.metadata, resourceVersion: found.metadata?.resourceVersion } },
        });
      else await rbac.createClusterRole({ body: role });
      const bound = await rbac.readClusterRoleBinding({ name: roleName }).catch(() => undefined);
      if (!bound) await rbac.createClusterRoleBinding({ body: binding });
      return;
    }
    const role = { metadata: { name: roleName, namespace, labels }, rules };
    const binding = { metadata: { name: roleName, namespace, labels }, roleRef, subjects };
    const found = await rbac.readNamespacedRole({ namespace, name: roleName }).catch(() => undefined);
    if (found) {
      await rbac.replaceNamespacedRole({
        namespace,
        name: roleName,
        body: { ...role, metadata: { ...role.metadata, resourceVersion: found.metadata?.resourceVersion } },
      });
    } else {
      await rbac.createNamespacedRole({ namespace, body: role });
    }
    const bound = await rbac.readNamespacedRoleBinding({ namespace, name: roleName }).catch(() => undefined);
    if (!bound) await rbac.createNamespacedRoleBinding({ namespace, body: binding });
  });
}

/**
 * A kubeconfig for the host cluster (the deployer's `cluster`: same server and CA) that authenticates as the
 * ServiceAccount, with a token from the TokenRequest API.
 */
export async function runtimeKubeconfig(
  host: HostCluster,
  cluster: HostClusterEntry,
  options: { name: string; namespace: string },
): Promise<string> {
  const account = serviceAccountName(options.name);
  const answer = await host.call(`get a token for ServiceAccount ${options.namespace}/${account}`, () =>
    host.core.createNamespacedServiceAccountToken({
      namespace: options.namespace,
      name: account,
      body: { spec: { audiences: [], expirationSeconds: RUNTIME_TOKEN_SECONDS } },
    }),
  );
  const token = answer.status?.token;
  if (!token) throw new Error(`the host cluster returned no token for ServiceAccount ${options.namespace}/${account}`);
  const contextName = `${account}@${cluster.name}`;
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: cluster.name,
        cluster: {
          server: cluster.server,
          "certificate-authority-data": cluster.caData,
          "certificate-authority": cluster.caFile,
          "insecure-skip-tls-verify": cluster.insecure || undefined,
        },
      },
    ],
    users: [{ name: account, user: { token } }],
    contexts: [{ name: contextName, context: { cluster: cluster.name, user: account, namespace: options.namespace } }],
    "current-context": contextName,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
