// The platform config schema: status of the Config resource, and what spec.raw is validated against. With the
// descriptions it is what `kubectl explain configs.status...` shows.

import { boolean, object, string } from "../apimachinery/schema-builders.ts";
import { auditSchema } from "./schema-audit.ts";
import { authSchema } from "./schema-auth.ts";
import { deprecated, stringWithDefault } from "./schema-builders.ts";
import { costControlSchema } from "./schema-cost-control.ts";
import { appsSchema, cloudSchema, oidcServerSchema, secretStoreSchema, uiSettingsSchema } from "./schema-other.ts";

/** The config's fields: what spec.raw may hold (the Config kind's status adds the platform's own fields). */
export const configProperties = {
  auth: authSchema,
  oidc: deprecated(oidcServerSchema, "the platform still serves these clients at https://<platformHost>/oidc."),
  apps: appsSchema,
  audit: auditSchema,
  platformHost: string("Domain where the platform is reached, without scheme (platform.example.com)."),
  projectNamespacePrefix: stringWithDefault("Prefix of project namespaces.", "p-"),
  workspaceSubDomain: deprecated(
    string("Wildcard subdomain for workspaces, such as *.workspace.example.com."),
    "no longer used.",
  ),
  uiSettings: uiSettingsSchema,
  secretStore: secretStoreSchema,
  disableConfigEndpoint: boolean(
    "Disables setting the config through the UI and the config endpoint: the config file is the only source.",
  ),
  authenticateVersionEndpoint: boolean(
    "Requires a valid access key on /version. Works with virtual cluster release 0.27 and later.",
  ),
  cloud: cloudSchema,
  costControl: costControlSchema,
};

export const configSchema = object(configProperties, "The parsed platform config with defaults filled in.");

/** Top-level fields that are deprecated, with the warning to give when they are set. */
export const DEPRECATED_FIELDS: Record<string, string> = {
  oidc: "oidc is deprecated: its clients are still served at /oidc",
  workspaceSubDomain: "workspaceSubDomain is deprecated and no longer used",
};
