// Config: the platform config, a cluster-scoped singleton named platform-config. spec.raw holds the YAML as
// written; status holds the parsed config with defaults, derived by the server on every write (what a client
// sends as status is replaced). Secrets are stored, but every read shows the redaction marker in their place,
// and writing the marker back keeps the stored value (src/config/restore-secrets.ts).

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { array, boolean, object, string, timestamp } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { resolveAuditPath } from "../../../config/audit-path.ts";
import { redactLastApplied } from "../../../config/last-applied.ts";
import { parseConfigText } from "../../../config/parse.ts";
import { redactConfigValue, redactRawConfig } from "../../../config/redact.ts";
import { REDACTED } from "../../../config/redaction-marker.ts";
import { restoreSecrets } from "../../../config/restore-secrets.ts";
import { configSchema } from "../../../config/schema.ts";
import { isTrustedConfigContext } from "../../../config/trusted-context.ts";
import type { PlatformConfig } from "../../../config/types.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { type Condition, conditionsSchema } from "./project-schema.ts";

export const CONFIG_NAME = "platform-config";

/** The maintenance window as the platform schedules it (cloud.maintenanceWindow). */
export interface MaintenanceStatus {
  /** When the window opens next, or opened when it is open now (RFC 3339). */
  nextWindowStart?: string;
  nextWindowEnd?: string;
  open?: boolean;
  /** The last time disruptive work ran in a window, and what it did. */
  lastRun?: { time: string; results: string[] };
}

/** Fields of status the platform maintains (its systems' conditions, the maintenance window), never parsed. */
export interface PlatformOwnedStatus {
  conditions?: Condition[];
  maintenance?: MaintenanceStatus;
}

export interface Config extends KubeObject {
  spec?: { raw?: string };
  status?: PlatformConfig & PlatformOwnedStatus;
}

const PLATFORM_OWNED = ["conditions", "maintenance"] as const;

/**
 * The platform-owned status fields: what a trusted (platform) write carries (its writers always send the whole
 * current status), else what is stored. A client's status never reaches them, and its writes of spec.raw keep them.
 */
function platformOwned(config: Config, stored: Config | undefined, trusted: boolean): PlatformOwnedStatus {
  const out: Record<string, unknown> = {};
  for (const field of PLATFORM_OWNED) {
    const value = trusted ? config.status?.[field] : stored?.status?.[field];
    if (value !== undefined) out[field] = value;
  }
  return out as PlatformOwnedStatus;
}

const statusSchema = {
  ...configSchema,
  properties: {
    ...(configSchema.properties as Record<string, unknown>),
    conditions: conditionsSchema,
    maintenance: object(
      {
        nextWindowStart: timestamp("When the maintenance window opens next (or opened, while it is open)."),
        nextWindowEnd: timestamp("When that window closes."),
        open: boolean("Whether the window is open now: disruptive background work runs only then."),
        lastRun: object(
          {
            time: timestamp("When disruptive work last ran in a window."),
            results: array({ type: "string" }, "What each task did."),
          },
          "The last run in a window.",
        ),
      },
      "The maintenance window as the platform schedules it (set by the platform; absent without a window).",
    ),
  },
};

const spec = object(
  {
    raw: string(
      `The platform config as YAML, as written. Secrets in it read as "${REDACTED}"; writing that marker back keeps the stored secret.`,
    ),
  },
  "The platform config as written.",
);

const gr = { group: GROUP, resource: "configs" };
const gk = { group: GROUP, kind: "Config" };

/** Parses spec.raw (restoring the secrets a read redacted) and derives status; throws 422 with every problem. */
function derive(
  config: Config,
  stored: Config | undefined,
  context: RequestContext,
  options: ConfigDefinitionOptions,
): void {
  const written = config.spec?.raw;
  if (written !== undefined && typeof written !== "string") return; // the schema reports spec.raw's type
  const raw = written ?? "";
  const name = config.metadata.name ?? "";
  const restored = restoreSecrets(raw, stored?.spec?.raw);
  const parsed = parseConfigText(restored.raw);
  const problems = [...restored.errors, ...parsed.errors];
  const auditPath = parsed.config.audit?.path;
  if (options.auditDirs && typeof auditPath === "string" && auditPath !== "") {
    const { problem } = resolveAuditPath(auditPath, options.auditDirs());
    if (problem) problems.push(fieldError.invalid("spec.raw.audit.path", auditPath, problem));
  }
  if (problems.length > 0) throw errors.invalid(gk, name, problems);
  context.warnings.push(...parsed.warnings);
  // No spec.raw stays no spec.raw: the platform's empty default must not own the field (server-side apply).
  config.spec = written === undefined ? {} : { raw: restored.raw };
  config.status = { ...parsed.config, ...platformOwned(config, stored, isTrustedConfigContext(context)) };
  redactLastApplied(config);
}

export interface ConfigDefinitionOptions {
  /** Only the name platform-config is accepted (default). Off only for the generic conformance tests. */
  singleton?: boolean;
  /** The audit directories audit.path must lie in (resolved; the first takes relative paths); unset: any path. */
  auditDirs?: () => readonly string[];
}

export function configDefinition(options: ConfigDefinitionOptions = {}): ResourceDefinition {
  const singleton = options.singleton ?? true;
  return defineResource<Config>({
    group: GROUP,
    version: VERSION,
    kind: "Config",
    plural: "configs",
    singular: "config",
    categories: [CATEGORY],
    namespaced: false,
    description: `Config is the platform config: a singleton named ${CONFIG_NAME}. spec.raw holds the YAML as written; status holds the parsed config with defaults.`,
    schema: { spec, status: statusSchema },
    // The singleton is never deleted: without it the platform would fall back to defaults silently.
    verbs: ["get", "list", "watch", "create", "update", "patch"],
    strategy: {
      prepareForCreate(config, context) {
        derive(config, undefined, context, options);
      },
      prepareForUpdate(config, old, context) {
        if (old.status?.disableConfigEndpoint === true && !isTrustedConfigContext(context)) {
          throw errors.forbidden(
            gr,
            old.metadata.name ?? CONFIG_NAME,
            "the platform config is managed through its config file (disableConfigEndpoint is true): edit the file given to `platform start --config`",
          );
        }
        derive(config, old, context, options);
      },
      validate(config) {
        const errs: FieldError[] = [];
        const name = config.metadata.name;
        if (singleton && name !== CONFIG_NAME) {
          errs.push(
            fieldError.notSupported("metadata.name", name ?? config.metadata.generateName ?? "", [CONFIG_NAME]),
          );
        }
        return errs;
      },
      presentForRead(config, context) {
        if (isTrustedConfigContext(context)) return config;
        const out = structuredClone(config);
        if (typeof out.spec?.raw === "string") out.spec.raw = redactRawConfig(out.spec.raw);
        if (out.status) out.status = redactConfigValue(out.status);
        redactLastApplied(out);
        return out;
      },
    },
    columns: [
      {
        name: "Platform Host",
        type: "string",
        description: "Domain where the platform is reached.",
        cell: (c) => c.status?.platformHost,
      },
      {
        name: "Audit",
        type: "boolean",
        description: "Whether audit logging is enabled.",
        cell: (c) => c.status?.audit?.enabled === true,
      },
      {
        name: "Config Endpoint",
        type: "string",
        description: "Whether the API may change the config (Disabled: only the config file can).",
        cell: (c) => (c.status?.disableConfigEndpoint ? "Disabled" : "Enabled"),
      },
    ],
  });
}
