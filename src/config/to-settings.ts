// The platform config mapped onto the live settings every subsystem reads. A field the config sets wins; a field
// it leaves unset keeps the value `platform start` seeded (whose defaults are the specification's).

import { DEFAULT_AUDIT_MAX_SIZE_MB } from "./defaults.ts";
import { PROVIDERS } from "./schema-auth.ts";
import type {
  AuditSettings,
  ConnectorSettings,
  OidcProviderSettings,
  PlatformSettings,
  ProviderKind,
} from "./settings.ts";
import { appsSettingsOf, cloudSettingsOf, costControlSettingsOf, secretStoreSettingsOf } from "./system-settings.ts";
import type { AuditConfig, AuthConfig, PlatformConfig, ProviderBlocks } from "./types.ts";

/** Names shown for the built-in blocks (an OIDC block's `type` wins). */
const DISPLAY_NAMES: Record<ProviderKind, string> = {
  oidc: "OpenID Connect",
  codeHostA: "Code host A",
  codeHostB: "Code host B",
  idpA: "Identity provider A",
  idpB: "Identity provider B",
  saml: "SAML",
};

function providerOf(blocks: ProviderBlocks): { kind: ProviderKind; config: Record<string, unknown> } | undefined {
  for (const kind of PROVIDERS as ProviderKind[]) {
    const config = blocks[kind];
    if (config && typeof config === "object") return { kind, config: structuredClone(config) };
  }
  return undefined;
}

/** Every login connector of the auth block: the built-in blocks (id = block name), then auth.connectors. */
export function connectorsOf(auth: AuthConfig): ConnectorSettings[] {
  const out: ConnectorSettings[] = [];
  for (const kind of PROVIDERS as ProviderKind[]) {
    const config = auth[kind];
    if (!config || typeof config !== "object") continue;
    const type = kind === "oidc" && "type" in config && config.type ? config.type : undefined;
    out.push({ id: kind, displayName: type ?? DISPLAY_NAMES[kind], kind, config: structuredClone(config) });
  }
  for (const item of auth.connectors ?? []) {
    const provider = providerOf(item);
    if (!provider || !item.id || out.some((c) => c.id === item.id)) continue;
    out.push({ id: item.id, displayName: item.displayName || item.id, ...provider });
  }
  return out;
}

/** The audit block as the audit logger reads it (src/audit/audit-logger.ts). */
export function auditSettingsOf(audit: AuditConfig | undefined): AuditSettings {
  return {
    ...structuredClone(audit ?? {}),
    enabled: audit?.enabled === true,
    maxSize: audit?.maxSize || DEFAULT_AUDIT_MAX_SIZE_MB,
  };
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

/** status.oidc as the OpenID provider reads it: clients without a clientId are left out (validation names them). */
export function oidcProviderSettingsOf(oidc: Record<string, unknown> | undefined): OidcProviderSettings {
  const clients = Array.isArray(oidc?.clients) ? (oidc.clients as Record<string, unknown>[]) : [];
  return {
    enabled: oidc?.enabled !== false,
    wildcardRedirect: oidc?.wildcardRedirect === true,
    clients: clients
      .filter((client) => client && typeof client === "object" && text(client.clientId) !== "")
      .map((client) => ({
        name: text(client.name),
        clientId: text(client.clientId),
        clientSecret: text(client.clientSecret),
        redirectURIs: Array.isArray(client.redirectURIs)
          ? client.redirectURIs.filter((u) => typeof u === "string")
          : [],
      })),
  };
}

/** `explicit` is the config as written (parse result without defaults); `seed` the settings before any config. */
export function toPlatformSettings(explicit: PlatformConfig, seed: PlatformSettings): PlatformSettings {
  const auth = explicit.auth ?? {};
  return {
    ...seed,
    auth: {
      ...seed.auth,
      accessKeyMaxTTLSeconds: auth.accessKeyMaxTTLSeconds ?? seed.auth.accessKeyMaxTTLSeconds,
      loginAccessKeyTTLSeconds: auth.loginAccessKeyTTLSeconds ?? seed.auth.loginAccessKeyTTLSeconds,
      passwordLoginDisabled: auth.password?.disabled ?? seed.auth.passwordLoginDisabled,
      customHttpHeaders: { ...(auth.customHttpHeaders ?? seed.auth.customHttpHeaders) },
      sso: {
        connectors: connectorsOf(auth),
        disableTeamCreation: auth.disableTeamCreation === true,
        disableUserCreation: auth.disableUserCreation === true,
        groupsFilters: [...(auth.groupsFilters ?? [])],
      },
    },
    platformHost: explicit.platformHost || seed.platformHost,
    projectNamespacePrefix: explicit.projectNamespacePrefix || seed.projectNamespacePrefix,
    authenticateVersionEndpoint: explicit.authenticateVersionEndpoint ?? seed.authenticateVersionEndpoint,
    audit: explicit.audit ? auditSettingsOf(explicit.audit) : seed.audit,
    ui: structuredClone(explicit.uiSettings ?? {}),
    disableConfigEndpoint: explicit.disableConfigEndpoint === true,
    oidc: explicit.oidc ? oidcProviderSettingsOf(explicit.oidc) : seed.oidc,
    costControl: costControlSettingsOf(explicit.costControl),
    secretStore: secretStoreSettingsOf(explicit.secretStore),
    apps: appsSettingsOf(explicit.apps),
    cloud: cloudSettingsOf(explicit.cloud),
  };
}
