import { type FieldError, fieldError, formatFieldError } from "../../apimachinery/field-errors.ts";
import { checkAuditSettings } from "./audit-settings.ts";
import { applySchema } from "./schema.ts";
import { settingsSchema } from "./settings-schema.ts";
import type { VirtualClusterSettings } from "./types.ts";

export interface DefaultsOptions {
  /** The virtual cluster's own namespace: the default of external.platform.apiKey.namespace. */
  namespace?: string;
}

/**
 * Checks raw settings (parsed YAML) and merges them with the defaults. Returns the settings and every problem as
 * `field: reason` lines; a field with a problem falls back to its default.
 */
export function withDefaults(
  raw: unknown,
  options: DefaultsOptions = {},
): { settings: VirtualClusterSettings; problems: string[] } {
  const errors: FieldError[] = [];
  const settings = applySchema(settingsSchema, raw, "", errors) as VirtualClusterSettings;
  const { endpoints, services } = settings.sync.toHost;
  if (services.enabled && !endpoints.enabled) {
    errors.push({
      type: "FieldValueInvalid",
      field: "sync.toHost.services.enabled",
      badValue: true,
      detail: "service syncing requires sync.toHost.endpoints.enabled",
    });
  }
  const oidc = settings.controlPlane.apiServer.oidc;
  if (oidc) {
    const at = "controlPlane.apiServer.oidc";
    if (!oidc.issuerURL) errors.push(fieldError.required(`${at}.issuerURL`, "the issuer of the ID tokens"));
    else if (!/^https:\/\/[^?#]+$/.test(oidc.issuerURL) || !URL.canParse(oidc.issuerURL)) {
      errors.push(fieldError.invalid(`${at}.issuerURL`, oidc.issuerURL, "must be an https address without query"));
    }
    if (!oidc.clientID) errors.push(fieldError.required(`${at}.clientID`, "the audience the ID tokens must name"));
  }
  if (settings.audit) errors.push(...checkAuditSettings(settings.audit));
  const apiKey = settings.external.platform?.apiKey;
  if (apiKey && apiKey.namespace === undefined && options.namespace) apiKey.namespace = options.namespace;
  return { settings, problems: errors.map(formatFieldError) };
}

/** The settings of an empty virtualcluster.yaml. */
export function defaultSettings(options: DefaultsOptions = {}): VirtualClusterSettings {
  return withDefaults({}, options).settings;
}
