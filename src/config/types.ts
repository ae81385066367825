// TypeScript shapes of the platform config, derived from its schema (schema*.ts): the schema is the one source, and
// these names only point into it.

import type { Static } from "../apimachinery/schema-builders.ts";
import type { configSchema } from "./schema.ts";
import type { AUDIT_LEVELS, AUDIT_STAGES } from "./schema-audit.ts";
import type { oidcProviderSchema, providerSchemas } from "./schema-auth.ts";

export type AuditLevel = (typeof AUDIT_LEVELS)[number];
export type AuditStage = (typeof AUDIT_STAGES)[number];

/** The parsed platform config (status of the Config resource). */
export type PlatformConfig = Static<typeof configSchema>;
export type AuthConfig = NonNullable<PlatformConfig["auth"]>;
export type AuditConfig = NonNullable<PlatformConfig["audit"]>;
export type AuditPolicy = NonNullable<AuditConfig["policy"]>;
export type AuditPolicyRule = NonNullable<AuditPolicy["rules"]>[number];
export type AuditGroupResources = NonNullable<AuditPolicyRule["resources"]>[number];
export type OidcProvider = Static<typeof oidcProviderSchema>;
/** The provider blocks, by field name: the same set appears in auth and in every connector. */
export type ProviderBlocks = { [K in keyof typeof providerSchemas]?: Static<(typeof providerSchemas)[K]> };
