// Project (cluster-scoped): a namespace `<prefix><name>` for virtual cluster instances, its owner, its members with
// project roles, and the clusters its instances may use. With an instance counter (the platform's wiring) a project
// carries a finalizer, so deleting one that still has instances waits for them, and the DELETE says so.

import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label, validateDns1123Subdomain } from "../../../apimachinery/names.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { ownerField, privilegedField, projectMembersField } from "./granting-fields.ts";
import { DEFAULT_PROJECT_ROLE, PROJECT_FINALIZER, type Project, projectSchema } from "./project-schema.ts";

export interface ProjectDefinitionOptions {
  /** Prefix of project namespaces, read at every use (the platform config can change it). */
  namespacePrefix(): string;
  /** Counts the instances in a namespace. Given by the platform: then projects carry the deletion finalizer. */
  instances?: { count(namespace: string): Promise<number> };
}

const NAMESPACE_MAX = 63;
/**
 * The owner (makeowner on it) and members (bind on each) are granted the project's rights; widening where instances
 * may run is a platform decision (`escalate`, the admin role).
 */
const PROJECT_GRANTS = [
  ownerField(),
  projectMembersField("spec.members"),
  privilegedField("spec.allowedClusters", [{ name: "granted-cluster" }]),
];

export function projectNamespace(prefix: string, project: string): string {
  return `${prefix}${project}`;
}

/** The project whose namespace this is, or undefined (the prefix alone names no project). */
export function projectOfNamespace(prefix: string, namespace: string | undefined): string | undefined {
  if (!namespace?.startsWith(prefix) || namespace.length === prefix.length) return undefined;
  return namespace.slice(prefix.length);
}

function memberKey(member: { kind?: string; name: string }): string {
  return `${member.kind ?? "User"}/${member.name}`;
}

export function createProjectDefinition(options: ProjectDefinitionOptions): ResourceDefinition {
  const { instances } = options;
  const holdDeletion = (project: Project) => {
    if (!instances || project.metadata.deletionTimestamp) return;
    const finalizers = project.metadata.finalizers ?? [];
    if (!finalizers.includes(PROJECT_FINALIZER)) project.metadata.finalizers = [...finalizers, PROJECT_FINALIZER];
  };

  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: "Project",
    plural: "projects",
    singular: "project",
    categories: [CATEGORY],
    namespaced: false,
    description:
      "Project groups virtual cluster instances in the namespace <projectNamespacePrefix><name> and grants its members access to them.",
    schema: projectSchema,
    authorization: {
      // Every user or team lists and watches projects: the store shows each caller the projects it may read.
      ownerRights: { holder: "user-or-team", verbs: ["list", "watch"] },
      grants: PROJECT_GRANTS,
    },
    statusSubresource: true,
    strategy: {
      canonicalize(project) {
        for (const member of project.spec?.members ?? []) {
          member.kind ||= "User";
          member.clusterRole ||= DEFAULT_PROJECT_ROLE;
        }
      },
      prepareForCreate(project) {
        holdDeletion(project);
        project.status = { phase: "Active" };
      },
      prepareForUpdate(project) {
        holdDeletion(project);
      },
      validate(project) {
        const errs: FieldError[] = [];
        const name = project.metadata.name ?? "";
        // The project's namespace must be a valid namespace name (other name problems: the generic rules say).
        if (name && validateDns1123Subdomain(name).length === 0) {
          const namespace = projectNamespace(options.namespacePrefix(), name);
          for (const problem of validateDns1123Label(name))
            errs.push(fieldError.invalid("metadata.name", name, problem));
          if (errs.length === 0 && namespace.length > NAMESPACE_MAX) {
            errs.push(
              fieldError.invalid(
                "metadata.name",
                name,
                `the project's namespace "${namespace}" must be no more than ${NAMESPACE_MAX} characters`,
              ),
            );
          }
        }
        const seen = new Set<string>();
        for (const [i, member] of (project.spec?.members ?? []).entries()) {
          const key = memberKey(member);
          if (seen.has(key)) errs.push(fieldError.duplicate(`spec.members[${i}]`, key));
          seen.add(key);
          if (!member.name) errs.push(fieldError.required(`spec.members[${i}].name`));
        }
        return errs;
      },
      async beforeDelete(project, context) {
        if (!instances) return;
        const namespace = projectNamespace(options.namespacePrefix(), project.metadata.name ?? "");
        const count = await instances.count(namespace);
        if (count === 0) return;
        context.warnings.push(
          `project "${project.metadata.name}" still has ${count} virtual cluster instance${count === 1 ? "" : "s"} in namespace "${namespace}": it is marked for deletion and goes away once they are deleted`,
        );
      },
    },
    columns: [
      {
        name: "Display Name",
        type: "string",
        description: "Name shown in the UI.",
        cell: (p) => p.spec?.displayName,
      },
      {
        name: "Owner",
        type: "string",
        description: "Owning user or team.",
        cell: (p) => p.spec?.owner?.user ?? (p.spec?.owner?.team ? `team:${p.spec.owner.team}` : ""),
      },
      {
        name: "Members",
        type: "integer",
        description: "Number of users and teams with a project role.",
        cell: (p) => p.spec?.members?.length ?? 0,
      },
      {
        name: "Namespace",
        type: "string",
        description: "Namespace of the project's virtual cluster instances.",
        cell: (p) => projectNamespace(options.namespacePrefix(), p.metadata.name ?? ""),
      },
      {
        name: "Phase",
        type: "string",
        description: "Active, or Terminating while the deletion waits for the project's instances.",
        cell: (p) => (p.metadata.deletionTimestamp ? "Terminating" : (p.status?.phase ?? "")),
      },
    ],
  });
}
