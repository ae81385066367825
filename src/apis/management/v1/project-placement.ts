// Where a project's objects may go: the project of an object in a project namespace (it must exist and not be
// deleting), and the clusters the project allows. Shared by the kinds that live in project namespaces
// (VirtualClusterInstance, SpaceInstance); every refusal is a 422 naming the field and how to fix it.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label } from "../../../apimachinery/names.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext } from "../../../registry/types.ts";
import { GROUP } from "./common.ts";
import { projectNamespace, projectOfNamespace } from "./project.ts";
import type { Project } from "./project-schema.ts";

export interface ProjectLookup {
  /** Prefix of project namespaces, read at every use. */
  namespacePrefix(): string;
  /** A project as stored now. */
  project(name: string): Promise<Project | undefined>;
}

function invalid(kind: string, object: KubeObject, errs: FieldError[]): never {
  throw errors.invalid({ group: GROUP, kind }, object.metadata.name ?? object.metadata.generateName ?? "", errs);
}

/** The object's project: it must exist and not be deleting (422 naming the project otherwise). */
export async function requireProject(lookup: ProjectLookup, kind: string, object: KubeObject): Promise<Project> {
  const prefix = lookup.namespacePrefix();
  const namespace = object.metadata.namespace;
  const plural = kind === "SpaceInstance" ? "spaces" : kind === "HelmRelease" ? "apps" : "instances";
  if (!namespace)
    invalid(kind, object, [fieldError.required("metadata.namespace", `${plural} live in a project namespace`)]);
  const name = projectOfNamespace(prefix, namespace);
  const example = projectNamespace(prefix, "default");
  if (!name) {
    invalid(kind, object, [
      fieldError.invalid(
        "metadata.namespace",
        namespace,
        `not a project namespace: ${plural} live in the namespace "${prefix}<project>" of their project, e.g. "${example}" for the project "default"`,
      ),
    ]);
  }
  const project = await lookup.project(name);
  if (!project) {
    invalid(kind, object, [
      fieldError.invalid(
        "metadata.namespace",
        namespace,
        `project "${name}" does not exist: create the project "${name}" first, or use the namespace of an existing project`,
      ),
    ]);
  }
  if (project.metadata.deletionTimestamp) {
    invalid(kind, object, [
      fieldError.invalid("metadata.namespace", namespace, `project "${name}" is being deleted: no new ${plural}`),
    ]);
  }
  return project;
}

/** The clusters a project allows (empty or "*": every cluster); 422 on spec.clusterRef.cluster otherwise. */
export function checkAllowedCluster(kind: string, object: KubeObject, cluster: string | undefined, project: Project) {
  const allowed = (project.spec?.allowedClusters ?? []).map((c) => c.name);
  if (!cluster || allowed.length === 0 || allowed.includes("*") || allowed.includes(cluster)) return;
  invalid(kind, object, [fieldError.notSupported("spec.clusterRef.cluster", cluster, allowed)]);
}

/** Connected clusters as a placement check reads them. */
export interface ClusterLookup {
  /** Whether the cluster exists now. */
  exists(name: string): Promise<boolean>;
}

/** Holds a space or a platform-created virtual cluster until its cluster's agent removed what it made on the host. */
export const CLUSTER_AGENT_FINALIZER = "management.platform.sh/cluster-agent";

/** Namespaces of the host's own workloads and of the agent, which no space or virtual cluster may take over. */
export const RESERVED_HOST_NAMESPACES: readonly string[] = [
  "default",
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "virtualcluster-platform",
];

/**
 * A placement on a connected cluster: the cluster must exist (422) and the caller must be allowed to use it (403),
 * so nobody places work on a cluster they could not reach themselves.
 */
export async function checkClusterPlacement(
  kind: string,
  object: KubeObject,
  cluster: string,
  context: RequestContext,
  lookup: ClusterLookup,
): Promise<void> {
  if (!(await lookup.exists(cluster))) {
    invalid(kind, object, [
      fieldError.invalid(
        "spec.clusterRef.cluster",
        cluster,
        `cluster "${cluster}" does not exist (see kubectl get clusters)`,
      ),
    ]);
  }
  const decision = await context.authorizer.authorize({
    user: context.user,
    verb: "use",
    group: GROUP,
    resource: "clusters",
    name: cluster,
    resourceRequest: true,
  });
  if (!decision.allowed) {
    throw errors.forbidden(
      { group: GROUP, resource: "clusters" },
      cluster,
      `User "${context.user.name}" cannot use the cluster, so cannot place a ${kind} on it${decision.reason ? `: ${decision.reason}` : ""}`,
    );
  }
}

/** The host namespace must be a DNS label and not one of the host's own. */
export function hostNamespaceErrors(namespace: string | undefined): FieldError[] {
  if (!namespace) return [];
  const path = "spec.clusterRef.namespace";
  const problems = validateDns1123Label(namespace).map((problem) => fieldError.invalid(path, namespace, problem));
  if (RESERVED_HOST_NAMESPACES.includes(namespace)) {
    problems.push(fieldError.forbidden(path, `"${namespace}" belongs to the host cluster itself`));
  }
  return problems;
}
