// Every resource the management platform serves, in discovery order: the platform's one registration list.
// A plain kind (no dependencies at run time) is one line here; kinds that need the running platform (the auth
// layer's keys and tokens, projects and instances) are made by their part of the composition and listed here too.

import { selfSubjectReviewDefinition } from "../apis/authentication/v1/selfsubjectreview.ts";
import { selfSubjectAccessReviewDefinition as kubernetesSelfSubjectAccessReviewDefinition } from "../apis/authorization/v1/selfsubjectaccessreview.ts";
import { selfSubjectRulesReviewDefinition } from "../apis/authorization/v1/selfsubjectrulesreview.ts";
import { type SubjectDirectory, withGrantChecks } from "../apis/management/v1/access-checks.ts";
import { type ConfigDefinitionOptions, configDefinition } from "../apis/management/v1/config.ts";
import { selfSubjectAccessReviewDefinition } from "../apis/management/v1/selfsubjectaccessreview.ts";
import { teamDefinition } from "../apis/management/v1/team.ts";
import { userDefinition } from "../apis/management/v1/user.ts";
import type { ActionHandler, ResourceDefinition } from "../registry/types.ts";
import type { ClusterDefinitions } from "./clusters/cluster-resources.ts";
import type { AuthDefinitions } from "./identity-kinds.ts";
import type { ProjectDefinitions } from "./projects/project-resources.ts";

export interface ManagementResourceParts {
  auth: AuthDefinitions;
  projects: ProjectDefinitions;
  clusters: ClusterDefinitions;
  config?: ConfigDefinitionOptions;
  /** Made by the store encryption (src/platform/store-encryption.ts). */
  encryptionKeyRotations: ResourceDefinition;
  /** Where grant checks look up the users and teams a granting field names. */
  subjects: SubjectDirectory;
  /** Served from the audit datastore (src/platform/audit-event-store.ts), and the instances' event intake. */
  audit: { events: ResourceDefinition; instanceEvents: ActionHandler };
}

/** Every definition that declares granting fields gets the grant checks: none can slip past. */
export function managementResources(parts: ManagementResourceParts): ResourceDefinition[] {
  const { auth, projects } = parts;
  const definitions = [
    withSubresources(userDefinition, auth.subresources.users),
    withSubresources(teamDefinition, auth.subresources.teams),
    auth.ownedAccessKeys,
    auth.self,
    selfSubjectAccessReviewDefinition,
    // kubectl auth can-i (--list) and whoami ask the Kubernetes groups, also of the platform.
    kubernetesSelfSubjectAccessReviewDefinition,
    selfSubjectRulesReviewDefinition,
    selfSubjectReviewDefinition,
    auth.directClusterEndpointTokens,
    auth.signingKeyRotations,
    parts.encryptionKeyRotations,
    projects.projects,
    withSubresources(projects.instances, { auditevents: parts.audit.instanceEvents }),
    projects.secrets,
    projects.apps,
    parts.clusters.clusters,
    parts.clusters.spaces,
    configDefinition(parts.config),
    parts.audit.events,
  ];
  return definitions.map((definition) => withGrantChecks(definition, parts.subjects));
}

/** A definition with subresources served by another part of the platform added to its own. */
function withSubresources(
  definition: ResourceDefinition,
  subresources: Record<string, ActionHandler>,
): ResourceDefinition {
  return { ...definition, subresources: { ...definition.subresources, ...subresources } };
}
