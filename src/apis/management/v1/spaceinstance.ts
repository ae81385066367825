// SpaceInstance (namespaced in project namespaces): a namespace on a connected cluster owned by the project. Creating
// one needs the project to allow the cluster and the caller to be allowed to use it; the space carries a finalizer
// until the cluster's agent confirms the namespace is gone. Where it lives (spec.clusterRef) never changes.

import { fieldError } from "../../../apimachinery/field-errors.ts";
import type { AuthorizationFacts } from "../../../registry/authorization-facts.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { accessRulesField, ownerField } from "./granting-fields.ts";
import { projectOfNamespace } from "./project.ts";
import {
  CLUSTER_AGENT_FINALIZER,
  type ClusterLookup,
  checkAllowedCluster,
  checkClusterPlacement,
  hostNamespaceErrors,
  type ProjectLookup,
  requireProject,
} from "./project-placement.ts";
import { type SpaceInstance, spaceInstanceSchema } from "./spaceinstance-schema.ts";

export type { SpaceInstance } from "./spaceinstance-schema.ts";

export interface SpaceInstanceOptions extends ProjectLookup {
  /** Connected clusters. Without them (a registry of its own) nothing would ever remove a space's finalizer. */
  clusters?: ClusterLookup;
}

const KIND = "SpaceInstance";

export const SPACE_INSTANCE_AUTHORIZATION: AuthorizationFacts = {
  grants: [ownerField(), accessRulesField("spec.access")],
};

/** The namespace a space has on its cluster. */
export function spaceNamespace(space: SpaceInstance): string {
  return space.spec?.clusterRef?.namespace || space.metadata.name || "";
}

export function createSpaceInstanceDefinition(options: SpaceInstanceOptions): ResourceDefinition {
  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: KIND,
    plural: "spaceinstances",
    singular: "spaceinstance",
    shortNames: ["space", "spaces"],
    categories: [CATEGORY],
    namespaced: true,
    description:
      "SpaceInstance is a namespace on a connected cluster owned by a project: its members get RoleBindings there by their project role.",
    schema: spaceInstanceSchema,
    statusSubresource: true,
    authorization: SPACE_INSTANCE_AUTHORIZATION,
    strategy: {
      async prepareForCreate(space, context) {
        const project = await requireProject(options, KIND, space);
        const cluster = space.spec?.clusterRef?.cluster ?? "";
        checkAllowedCluster(KIND, space, cluster, project);
        if (space.spec?.clusterRef && !space.spec.clusterRef.namespace && space.metadata.name) {
          space.spec.clusterRef.namespace = space.metadata.name;
        }
        if (options.clusters) {
          if (cluster) await checkClusterPlacement(KIND, space, cluster, context, options.clusters);
          const finalizers = space.metadata.finalizers ?? [];
          if (!finalizers.includes(CLUSTER_AGENT_FINALIZER)) {
            space.metadata.finalizers = [...finalizers, CLUSTER_AGENT_FINALIZER];
          }
        }
        space.status = { phase: "Pending", reason: "Scheduled", message: `waiting for cluster "${cluster}"` };
      },
      validate(space) {
        return hostNamespaceErrors(space.spec?.clusterRef?.namespace);
      },
      validateUpdate(space, old) {
        const was = old.spec?.clusterRef;
        const now = space.spec?.clusterRef;
        const errs = [];
        if (now?.cluster !== was?.cluster) {
          errs.push(fieldError.forbidden("spec.clusterRef.cluster", "a space cannot move to another cluster"));
        }
        if ((now?.namespace || undefined) !== (was?.namespace || undefined)) {
          errs.push(fieldError.forbidden("spec.clusterRef.namespace", "a space's namespace cannot change"));
        }
        return errs;
      },
    },
    columns: [
      {
        name: "Project",
        type: "string",
        description: "Project the space belongs to.",
        cell: (s) => projectOfNamespace(options.namespacePrefix(), s.metadata.namespace) ?? "",
      },
      {
        name: "Cluster",
        type: "string",
        description: "Connected cluster the space lives on.",
        cell: (s) => s.spec?.clusterRef?.cluster ?? "",
      },
      {
        name: "Namespace",
        type: "string",
        description: "Namespace of the space on its cluster.",
        cell: (s) => spaceNamespace(s),
      },
      {
        name: "Phase",
        type: "string",
        description: "Pending, Ready, Failed or Terminating.",
        cell: (s) => (s.metadata.deletionTimestamp ? "Terminating" : (s.status?.phase ?? "")),
      },
    ],
    selectableFields: {
      "spec.clusterRef.cluster": (s) => s.spec?.clusterRef?.cluster,
      "status.phase": (s) => s.status?.phase,
    },
  });
}
