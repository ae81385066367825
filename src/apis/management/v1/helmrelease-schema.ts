// HelmRelease: types and schema (what the console reads too; src/apis/management/v1/helmrelease.ts defines the kind).

import { integer, type KindOf, object, type Static, string } from "../../../apimachinery/schema-builders.ts";
import { conditionsSchema } from "./project-schema.ts";

export const HELM_RELEASE_PHASES = ["Pending", "Deployed", "Failed", "Uninstalling"] as const;

export const helmReleaseSchema = {
  spec: object(
    {
      chart: object(
        {
          repository: string("Name of a chart repository in the platform Config's apps.repositories."),
          name: string("Name of the chart in the repository."),
          version: string("Version of the chart (empty: the latest)."),
        },
        "The chart to install.",
        ["repository", "name"],
      ),
      target: object(
        {
          virtualClusterInstance: string("A virtual cluster instance of this project placed on a connected cluster."),
          space: string("A space of this project."),
          namespace: string(
            'Namespace inside the virtual cluster (default "default", created when missing); a space installs into the space.',
          ),
        },
        "Where the app goes: exactly one of virtualClusterInstance or space.",
      ),
      releaseName: string("Name of the Helm release (default: this object's name)."),
      values: string("Values for the chart, as YAML (what `helm install --values` reads)."),
    },
    "The app to install and where.",
    ["chart", "target"],
  ),
  status: object(
    {
      phase: string("Pending, Deployed, Failed or Uninstalling.", { enum: [...HELM_RELEASE_PHASES] }),
      revision: integer("The release's revision as Helm counts it."),
      cluster: string("Connected cluster whose agent installs the release."),
      chartVersion: string("Version of the chart installed."),
      observedGeneration: integer("The generation the agent last acted on."),
      lastAppliedTime: string("When the agent last installed or upgraded the release.", { format: "date-time" }),
      conditions: conditionsSchema,
    },
    "What the agent did.",
  ),
};

export type HelmRelease = KindOf<typeof helmReleaseSchema>;
export type HelmReleaseSpec = Static<typeof helmReleaseSchema.spec>;
export type HelmReleaseStatus = Static<typeof helmReleaseSchema.status>;
