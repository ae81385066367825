// Spaces on the host, as the platform asks for them (agent-api.ts): a namespace labelled with the space's uid, and
// one RoleBinding per project role (admin, edit, view: the host's own ClusterRoles) naming the project's members as
// the agent impersonates them. A namespace that exists without this space's uid is never taken over, and never
// deleted: the space fails with a message instead. Deleting a space deletes its namespace; the platform keeps
// asking until the host says it is gone. The agent's own identity does this work (host-rbac.ts).

import type { KubeObject } from "../apimachinery/types.ts";
import { hostGroupName, hostUserName } from "../apis/management/v1/host-identity.ts";
import { RBAC_GROUP } from "../apis/rbac/v1/common.ts";
import type { SpaceMember, SpaceRequest, WorkloadState } from "../http/tunnel/agent-api.ts";
import { KubeApiError } from "../virtualcluster/kube/kube-api-error.ts";
import type { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import { MANAGED_BY_AGENT, MANAGED_BY_LABEL, SPACE_ROLES } from "./host-rbac.ts";

export const SPACE_UID_LABEL = "management.platform.sh/space-uid";
export const SPACE_PROJECT_LABEL = "management.platform.sh/project";
export const SPACE_NAME_LABEL = "management.platform.sh/space";
const BINDING_PREFIX = "platform-";

export interface KnownSpace {
  project: string;
  space: string;
  uid: string;
}

const notFound = (error: unknown) => error instanceof KubeApiError && error.code === 404;

/** The RoleBindings a space's members need, one per role that has members. */
export function spaceRoleBindings(namespace: string, members: readonly SpaceMember[]): KubeObject[] {
  return SPACE_ROLES.flatMap((role) => {
    const subjects = members
      .filter((member) => member.role === role)
      .map((member) =>
        member.kind === "Team"
          ? { apiGroup: RBAC_GROUP, kind: "Group", name: hostGroupName(member.name) }
          : { apiGroup: RBAC_GROUP, kind: "User", name: hostUserName("User", member.name) },
      );
    if (subjects.length === 0) return [];
    return [
      {
        apiVersion: `${RBAC_GROUP}/v1`,
        kind: "RoleBinding",
        metadata: { name: `${BINDING_PREFIX}${role}`, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_AGENT } },
        roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
        subjects,
      },
    ];
  });
}

export class Spaces {
  readonly #http: KubeHttp;
  /** host namespace -> space. */
  readonly #known = new Map<string, KnownSpace>();

  constructor(http: KubeHttp) {
    this.#http = http;
  }

  /** Learns the spaces already on the host (after a restart). */
  async load(): Promise<void> {
    const list = await this.#http.request<{ items: KubeObject[] }>({
      method: "GET",
      path: "/api/v1/namespaces",
      query: { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_AGENT},${SPACE_UID_LABEL}` },
    });
    for (const namespace of list.items) {
      const labels = namespace.metadata.labels ?? {};
      this.#known.set(namespace.metadata.name ?? "", {
        project: labels[SPACE_PROJECT_LABEL] ?? "",
        space: labels[SPACE_NAME_LABEL] ?? "",
        uid: labels[SPACE_UID_LABEL] ?? "",
      });
    }
  }

  /** `<project>/<space>` of every space kept here. */
  names(): string[] {
    return [...this.#known.values()].map((space) => `${space.project}/${space.space}`).sort();
  }

  /** Every space kept here: its project and host namespace. */
  all(): { project: string; namespace: string }[] {
    return [...this.#known].map(([namespace, known]) => ({ project: known.project, namespace }));
  }

  /** The host namespace of a space, if it is kept here. */
  namespaceOf(project: string, space: string): string | undefined {
    for (const [namespace, known] of this.#known)
      if (known.project === project && known.space === space) return namespace;
    return undefined;
  }

  async put(namespace: string, request: SpaceRequest): Promise<WorkloadState> {
    const current = await this.#namespace(namespace);
    if (current && current.metadata.labels?.[SPACE_UID_LABEL] !== request.uid) {
      return {
        phase: "Failed",
        message: `namespace "${namespace}" already exists on the cluster and belongs to something else: choose another namespace for the space`,
      };
    }
    if (current?.metadata.deletionTimestamp) {
      return { phase: "Pending", message: `namespace "${namespace}" is still being deleted` };
    }
    if (!current) {
      const labels = {
        [MANAGED_BY_LABEL]: MANAGED_BY_AGENT,
        [SPACE_UID_LABEL]: request.uid,
        [SPACE_PROJECT_LABEL]: request.project,
        [SPACE_NAME_LABEL]: request.space,
      };
      await this.#http.request({
        method: "POST",
        path: "/api/v1/namespaces",
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels } },
      });
    }
    this.#known.set(namespace, { project: request.project, space: request.space, uid: request.uid });
    await this.#bindings(namespace, spaceRoleBindings(namespace, request.members));
    return { phase: "Ready" };
  }

  async delete(namespace: string, uid: string): Promise<WorkloadState> {
    const current = await this.#namespace(namespace);
    // Gone, or never ours: nothing of this space is left to remove.
    if (!current || current.metadata.labels?.[SPACE_UID_LABEL] !== uid) {
      if (this.#known.get(namespace)?.uid === uid) this.#known.delete(namespace);
      return { phase: "Gone" };
    }
    if (!current.metadata.deletionTimestamp) {
      await this.#http
        .request({
          method: "DELETE",
          path: `/api/v1/namespaces/${namespace}`,
          body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: current.metadata.uid } },
        })
        .catch((error: unknown) => {
          if (!notFound(error)) throw error;
        });
    }
    return { phase: "Pending", message: `namespace "${namespace}" is being deleted` };
  }

  async #namespace(name: string): Promise<KubeObject | undefined> {
    try {
      return await this.#http.request<KubeObject>({ method: "GET", path: `/api/v1/namespaces/${name}` });
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  /** Makes the agent's RoleBindings in the namespace exactly `wanted`. */
  async #bindings(namespace: string, wanted: KubeObject[]): Promise<void> {
    const collection = `/apis/${RBAC_GROUP}/v1/namespaces/${namespace}/rolebindings`;
    const list = await this.#http.request<{ items: KubeObject[] }>({
      method: "GET",
      path: collection,
      query: { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_AGENT}` },
    });
    const existing = new Map(list.items.map((item) => [item.metadata.name ?? "", item]));
    for (const binding of wanted) {
      const name = binding.metadata.name ?? "";
      const current = existing.get(name);
      existing.delete(name);
      if (!current) {
        await this.#http.request({ method: "POST", path: collection, body: binding });
      } else if (JSON.stringify(current.subjects) !== JSON.stringify(binding.subjects)) {
        await this.#http.request({
          method: "PUT",
          path: `${collection}/${name}`,
          body: { ...binding, metadata: { ...binding.metadata, resourceVersion: current.metadata.resourceVersion } },
        });
      }
    }
    for (const stale of existing.keys()) {
      await this.#http.request({ method: "DELETE", path: `${collection}/${stale}` }).catch((error: unknown) => {
        if (!notFound(error)) throw error;
      });
    }
  }
}
