// ProjectSecret (namespaced, in project namespaces): a secret a project keeps on the platform. Values are stored
// encrypted at rest (its key prefix is in SECRET_PREFIXES), kept in the Config's secret store when that is enabled
// (src/secretstore/, status.store and the Synced condition), and delivered as a Kubernetes Secret to the project's
// virtual clusters and spaces named in spec.deliverTo. spec.data holds base64 values like a core/v1 Secret;
// spec.stringData is write-only, merged into data on every write. In the platform's own namespace
// (virtualcluster-platform, admins only) a ProjectSecret holds what the platform itself needs, such as the secret
// store token a Config's secretStore.auth.tokenSecretRef names.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import {
  array,
  integer,
  type KindOf,
  object,
  type Static,
  string,
  stringMap,
  timestamp,
} from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { trimEndChar } from "../../../utils/trim-char.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { projectOfNamespace } from "./project.ts";
import type { Project } from "./project-schema.ts";
import { conditionsSchema } from "./project-schema.ts";

/** The platform's own namespace: secrets the platform needs (only admins reach it). */
export const PLATFORM_NAMESPACE = "virtualcluster-platform";
/** Largest total size of a secret's values, as a core/v1 Secret's. */
export const MAX_SECRET_BYTES = 1024 * 1024;

const KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const schema = {
  spec: object(
    {
      displayName: string("Name shown in the UI."),
      description: string("Description of the secret."),
      data: stringMap("The secret's values by key, base64-encoded (as in a core/v1 Secret)."),
      stringData: stringMap("Values as text, merged into data on write and never stored or returned as such."),
      deliverTo: array(
        object(
          {
            virtualClusterInstance: string("A virtual cluster instance of the project that receives the Secret."),
            space: string("A space of the project that receives the Secret."),
            namespace: string('Namespace in the virtual cluster (default "default"); spaces receive it in the space.'),
            secretName: string("Name of the Kubernetes Secret (default: this object's name)."),
          },
          "Where the secret is delivered as a Kubernetes Secret.",
        ),
        "Virtual clusters and spaces of the project that receive the secret as a Kubernetes Secret.",
      ),
    },
    "The secret's values and where they go.",
  ),
  status: object(
    {
      conditions: conditionsSchema,
      store: object(
        {
          path: string("Path of the secret in the secret store (KV version 2)."),
          version: integer("Version of the store's secret the platform last wrote or read."),
          syncedTime: timestamp("When the platform and the store last agreed."),
          observedGeneration: integer("The object's generation whose values the store's version holds."),
        },
        "The secret's copy in the Config's secret store.",
      ),
    },
    "The secret's sync state.",
  ),
};

export type ProjectSecret = KindOf<typeof schema>;
export type ProjectSecretSpec = Static<typeof schema.spec>;
/** Where a secret is delivered: one virtual cluster instance or space of the project, by name. */
export type SecretDelivery = NonNullable<ProjectSecretSpec["deliverTo"]>[number];

/** The decoded size of a base64 text. */
const decodedBytes = (value: string) =>
  Math.floor((value.length * 3) / 4) - (value.length - trimEndChar(value, "=").length);

function validateSpec(spec: ProjectSecretSpec | undefined): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(spec?.data ?? {})) {
    if (!KEY.test(key) || key.length > 253) {
      errs.push(fieldError.invalid(`spec.data[${key}]`, key, "a key must consist of alphanumerics, '-', '_' or '.'"));
    }
    if (!BASE64.test(value)) errs.push(fieldError.invalid(`spec.data[${key}]`, "<value>", "must be base64-encoded"));
    total += decodedBytes(value);
  }
  if (total > MAX_SECRET_BYTES) {
    errs.push(fieldError.tooLong("spec.data", MAX_SECRET_BYTES));
  }
  (spec?.deliverTo ?? []).forEach((target, index) => {
    const at = `spec.deliverTo[${index}]`;
    const kinds = [target.virtualClusterInstance, target.space].filter(Boolean).length;
    if (kinds !== 1) {
      errs.push(fieldError.invalid(at, JSON.stringify(target), "name exactly one of virtualClusterInstance or space"));
    }
    for (const field of ["namespace", "secretName"] as const) {
      const value = target[field];
      if (value !== undefined && (!DNS_LABEL.test(value) || value.length > 63)) {
        errs.push(fieldError.invalid(`${at}.${field}`, value, "must be a DNS label (lower case, digits, '-')"));
      }
    }
  });
  return errs;
}

/** The deliveries of a secret to one space or virtual cluster instance of its project. */
export function deliveriesTo(
  secret: ProjectSecret,
  target: { space: string } | { virtualClusterInstance: string },
): SecretDelivery[] {
  return (secret.spec?.deliverTo ?? []).filter((delivery) =>
    "space" in target
      ? delivery.space === target.space
      : delivery.virtualClusterInstance === target.virtualClusterInstance,
  );
}

/** stringData into data, as the API server does for a core/v1 Secret. */
function mergeStringData(secret: ProjectSecret): void {
  const spec = secret.spec;
  if (!spec?.stringData) return;
  spec.data = { ...spec.data };
  for (const [key, value] of Object.entries(spec.stringData)) {
    spec.data[key] = Buffer.from(String(value), "utf8").toString("base64");
  }
  delete spec.stringData;
}

export interface ProjectSecretOptions {
  namespacePrefix(): string;
  project(name: string): Promise<Project | undefined>;
}

export function createProjectSecretDefinition(options: ProjectSecretOptions): ResourceDefinition {
  const gk = { group: GROUP, kind: "ProjectSecret" };
  const checkNamespace = async (secret: ProjectSecret) => {
    const namespace = secret.metadata.namespace ?? "";
    if (namespace === PLATFORM_NAMESPACE) return;
    const name = projectOfNamespace(options.namespacePrefix(), namespace);
    const project = name ? await options.project(name) : undefined;
    if (!project || project.metadata.deletionTimestamp) {
      throw errors.invalid(gk, secret.metadata.name ?? "", [
        fieldError.invalid(
          "metadata.namespace",
          namespace,
          `not the namespace of an existing project: project secrets live in "${options.namespacePrefix()}<project>"`,
        ),
      ]);
    }
  };
  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: "ProjectSecret",
    plural: "projectsecrets",
    singular: "projectsecret",
    shortNames: ["psecret"],
    categories: [CATEGORY],
    namespaced: true,
    description:
      "ProjectSecret is a secret of a project: encrypted at rest, kept in the Config's secret store when enabled, and delivered to the project's virtual clusters and spaces.",
    schema,
    statusSubresource: true,
    strategy: {
      async prepareForCreate(secret) {
        await checkNamespace(secret);
        mergeStringData(secret);
        delete secret.status;
      },
      prepareForUpdate(secret) {
        mergeStringData(secret);
      },
      validate(secret) {
        return validateSpec(secret.spec);
      },
    },
    columns: [
      {
        name: "Keys",
        type: "integer",
        description: "Number of values.",
        cell: (s) => Object.keys(s.spec?.data ?? {}).length,
      },
      {
        name: "Synced",
        type: "string",
        description: "Whether the secret store holds the current values (empty: no secret store).",
        cell: (s) => s.status?.conditions?.find((c) => c.type === "Synced")?.status ?? "",
      },
      {
        name: "Store Version",
        type: "integer",
        priority: 1,
        description: "Version of the secret in the store.",
        cell: (s) => s.status?.store?.version,
      },
    ],
  });
}
