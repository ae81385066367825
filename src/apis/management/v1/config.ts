// Config: the platform config, a cluster-scoped singleton named platform-config. spec.raw holds the YAML as
// written; status holds the parsed config with defaults, derived by the server on every write (what a client
// sends as status is replaced). Secrets are stored, but every read shows the redaction marker in their place,
// and writing the marker back keeps the stored value (src/config/restore-secrets.ts).

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { resolveAuditPath } from "../../../config/audit-path.ts";
import { redactLastApplied } from "../../../config/last-applied.ts";
import { parseConfigText } from "../../../config/parse.ts";
import { redactConfigValue, redactRawConfig } from "../../../config/redact.ts";
import { restoreSecrets } from "../../../config/restore-secrets.ts";
import { isTrustedConfigContext } from "../../../config/trusted-context.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { type Config, configSchema, PLATFORM_OWNED, type PlatformOwnedStatus } from "./config-schema.ts";

export type { Config, MaintenanceStatus, PlatformOwnedStatus } from "./config-schema.ts";

export const CONFIG_NAME = "platform-config";

const gr = { group: GROUP, resource: "configs" };

/**
 * The platform-owned status fields: what a trusted (platform) write carries (its writers always send the whole
 * current status), else what is stored. A client's status never reaches them, and its writes of spec.raw keep them.
 */
function platformOwned(config: Config, stored: Config | undefined, trusted: boolean): PlatformOwnedStatus {
  const source = trusted ? config.status : stored?.status;
  const out: PlatformOwnedStatus = {};
  for (const field of PLATFORM_OWNED) {
    if (source?.[field] !== undefined) Object.assign(out, { [field]: source[field] });
  }
  return out;
}
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
  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: "Config",
    plural: "configs",
    singular: "config",
    categories: [CATEGORY],
    namespaced: false,
    description: `Config is the platform config: a singleton named ${CONFIG_NAME}. spec.raw holds the YAML as written; status holds the parsed config with defaults.`,
    schema: configSchema,
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
