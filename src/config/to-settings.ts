// The platform config mapped onto the live settings every subsystem reads. A field the config sets wins; a field
// it leaves unset keeps the value `platform start` seeded (whose defaults are the specification's).

import { DEFAULT_AUDIT_MAX_SIZE_MB } from "./defaults.ts";
import type { AuditSettings, PlatformSettings } from "./settings.ts";
import type { AuditConfig, PlatformConfig } from "./types.ts";

/** The audit block as the audit logger reads it (src/audit/audit-logger.ts). */
export function auditSettingsOf(audit: AuditConfig | undefined): AuditSettings {
  return {
    ...structuredClone(audit ?? {}),
    enabled: audit?.enabled === true,
    maxSize: audit?.maxSize || DEFAULT_AUDIT_MAX_SIZE_MB,
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
    },
    platformHost: explicit.platformHost || seed.platformHost,
    projectNamespacePrefix: explicit.projectNamespacePrefix || seed.projectNamespacePrefix,
    authenticateVersionEndpoint: explicit.authenticateVersionEndpoint ?? seed.authenticateVersionEndpoint,
    audit: explicit.audit ? auditSettingsOf(explicit.audit) : seed.audit,
  };
}
