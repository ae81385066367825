// HelmRelease (namespaced, in project namespaces): an app installed with Helm into one of the project's virtual
// clusters or spaces. The chart comes from a repository the Config's apps.repositories names (its credentials stay
// the platform's); the cluster's agent runs `helm upgrade --install` where `helm` is on its machine
// (src/agent/helm-releases.ts), and `helm uninstall` when the HelmRelease is deleted (a finalizer holds it until the
// agent confirms). The target is named within the project: a HelmRelease never reaches another project's objects.
// status says what the agent did: phase, the release's revision, the Ready condition.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label } from "../../../apimachinery/names.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { type HelmRelease, helmReleaseSchema } from "./helmrelease-schema.ts";
import { projectOfNamespace } from "./project.ts";
import { type ProjectLookup, requireProject } from "./project-placement.ts";

export type { HelmRelease, HelmReleaseSpec, HelmReleaseStatus } from "./helmrelease-schema.ts";

const KIND = "HelmRelease";
/** Held until the agent confirms `helm uninstall` (or that nothing is installed). */
export const HELM_RELEASE_FINALIZER = "management.platform.sh/helm-uninstall";
/** Largest values text (Helm stores a release in one Secret of at most 1 MiB). */
export const MAX_VALUES_BYTES = 256 * 1024;
/** The release's name in Helm. */
export function releaseNameOf(release: HelmRelease): string {
  return release.spec?.releaseName || release.metadata.name || "";
}

function labelErrors(path: string, value: string | undefined): FieldError[] {
  if (value === undefined || value === "") return [];
  return validateDns1123Label(value).map((detail) => fieldError.invalid(path, value, detail));
}

function validateSpec(release: HelmRelease): FieldError[] {
  const spec = release.spec;
  const errs: FieldError[] = [];
  const target = spec?.target ?? {};
  if ([target.virtualClusterInstance, target.space].filter(Boolean).length !== 1) {
    errs.push(
      fieldError.invalid("spec.target", JSON.stringify(target), "name exactly one of virtualClusterInstance or space"),
    );
  }
  if (target.space && target.namespace) {
    errs.push(fieldError.invalid("spec.target.namespace", target.namespace, "a space installs into the space"));
  }
  errs.push(...labelErrors("spec.target.namespace", target.namespace));
  // Helm's own rule: a release name is a DNS label of at most 53 characters.
  const name = releaseNameOf(release);
  errs.push(...labelErrors("spec.releaseName", name));
  if (name.length > 53) errs.push(fieldError.invalid("spec.releaseName", name, "must be at most 53 characters (Helm)"));
  if (!spec?.chart?.name || /[/\s]/.test(spec.chart.name)) {
    errs.push(fieldError.invalid("spec.chart.name", spec?.chart?.name ?? "", "a chart name, without repository"));
  }
  if (spec?.chart?.version && !/^[\w][-+.\w]*$/.test(spec.chart.version)) {
    errs.push(fieldError.invalid("spec.chart.version", spec.chart.version, "a chart version such as 1.2.3"));
  }
  if (Buffer.byteLength(spec?.values ?? "") > MAX_VALUES_BYTES) {
    errs.push(fieldError.tooLong("spec.values", MAX_VALUES_BYTES));
  }
  return errs;
}

export interface HelmReleaseOptions extends ProjectLookup {
  /** Why no agent can install a new release (no helm on its target's agent...), or undefined when one can. */
  installProblem?(release: HelmRelease): Promise<string | undefined>;
  /** Hold every HelmRelease with the uninstall finalizer (the platform, whose agents remove it; not a bare registry). */
  uninstallFinalizer?: boolean;
}

export function createHelmReleaseDefinition(options: HelmReleaseOptions): ResourceDefinition {
  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: KIND,
    plural: "helmreleases",
    singular: "helmrelease",
    shortNames: ["hr"],
    categories: [CATEGORY],
    namespaced: true,
    description:
      "HelmRelease is an app from a chart repository of the platform Config, installed with Helm by a connected cluster's agent into a virtual cluster or space of the project.",
    schema: helmReleaseSchema,
    statusSubresource: true,
    strategy: {
      async prepareForCreate(release) {
        await requireProject(options, KIND, release);
        const problem = await options.installProblem?.(release);
        if (problem) {
          const target = JSON.stringify(release.spec?.target ?? {});
          throw errors.invalid({ group: GROUP, kind: KIND }, release.metadata.name ?? "", [
            fieldError.invalid("spec.target", target, problem),
          ]);
        }
        const finalizers = release.metadata.finalizers ?? [];
        if (options.uninstallFinalizer && !finalizers.includes(HELM_RELEASE_FINALIZER)) {
          release.metadata.finalizers = [...finalizers, HELM_RELEASE_FINALIZER];
        }
        release.status = { phase: "Pending" };
      },
      validate: validateSpec,
      validateUpdate(release, old) {
        const errs: FieldError[] = [];
        const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
        if (!same(release.spec?.target, old.spec?.target)) {
          errs.push(fieldError.forbidden("spec.target", "an app cannot move: delete it and create another"));
        }
        if (releaseNameOf(release) !== releaseNameOf(old)) {
          errs.push(fieldError.forbidden("spec.releaseName", "a release cannot be renamed"));
        }
        return errs;
      },
    },
    columns: [
      {
        name: "Project",
        type: "string",
        priority: 1,
        description: "Project the app belongs to.",
        cell: (r) => projectOfNamespace(options.namespacePrefix(), r.metadata.namespace) ?? "",
      },
      {
        name: "Chart",
        type: "string",
        description: "repository/chart@version.",
        cell: (r) =>
          `${r.spec?.chart?.repository}/${r.spec?.chart?.name}${r.spec?.chart?.version ? `@${r.spec.chart.version}` : ""}`,
      },
      {
        name: "Target",
        type: "string",
        description: "The virtual cluster (vc/NAME) or space (space/NAME).",
        cell: (r) =>
          r.spec?.target?.space ? `space/${r.spec.target.space}` : `vc/${r.spec?.target?.virtualClusterInstance ?? ""}`,
      },
      {
        name: "Phase",
        type: "string",
        description: "Pending, Deployed, Failed or Uninstalling.",
        cell: (r) => (r.metadata.deletionTimestamp ? "Uninstalling" : (r.status?.phase ?? "")),
      },
      {
        name: "Revision",
        type: "integer",
        description: "The release's revision.",
        cell: (r) => r.status?.revision,
      },
    ],
    selectableFields: {
      "spec.target.virtualClusterInstance": (r) => r.spec?.target?.virtualClusterInstance,
      "spec.target.space": (r) => r.spec?.target?.space,
      "status.phase": (r) => r.status?.phase,
    },
  });
}
