// The defaults the specification gives, filled into a parsed config (the Config's status shows them). Blocks
// that are absent stay absent, except the top-level values every platform has.

import { isPlainObject } from "../apimachinery/types.ts";
import { SAML_PERSISTENT_NAME_ID } from "./schema-auth.ts";
import type { PlatformConfig } from "./types.ts";

export const DEFAULT_PROJECT_NAMESPACE_PREFIX = "p-";
export const DEFAULT_LOGIN_ACCESS_KEY_TTL_SECONDS = 20 * 24 * 60 * 60;
export const DEFAULT_AUDIT_MAX_SIZE_MB = 100;
export const DEFAULT_SYNC_INTERVAL = "1m";
export const DEFAULT_METRICS_RETENTION = "1y";

type Block = Record<string, unknown>;

function block(parent: Block, key: string): Block | undefined {
  const value = parent[key];
  return isPlainObject(value) ? value : undefined;
}

function ensure(parent: Block, key: string): Block {
  const existing = block(parent, key);
  if (existing) return existing;
  const created: Block = {};
  parent[key] = created;
  return created;
}

function emptyList(value: unknown): boolean {
  return value === undefined || (Array.isArray(value) && value.length === 0);
}

function providerDefaults(parent: Block): void {
  const oidc = block(parent, "oidc");
  if (oidc && emptyList(oidc.scopes)) oidc.scopes = ["email", "profile"];
  const idpA = block(parent, "idpA");
  if (idpA && emptyList(idpA.scopes)) idpA.scopes = ["profile", "email"];
  const idpB = block(parent, "idpB");
  if (idpB && !idpB.tenant) idpB.tenant = "common";
  const saml = block(parent, "saml");
  if (saml && !saml.nameIDPolicyFormat) saml.nameIDPolicyFormat = SAML_PERSISTENT_NAME_ID;
}

function metricsDefaults(parent: Block): void {
  const metrics = ensure(parent, "metrics");
  if (!metrics.retention) metrics.retention = DEFAULT_METRICS_RETENTION;
}

/** A defaulted copy of a valid config. `env` supplies VAULT_ADDR for the secret store address. */
export function withDefaults(config: PlatformConfig, env: Record<string, string | undefined>): PlatformConfig {
  const out = structuredClone(config) as Block;
  if (!out.projectNamespacePrefix) out.projectNamespacePrefix = DEFAULT_PROJECT_NAMESPACE_PREFIX;

  const auth = ensure(out, "auth");
  if (auth.loginAccessKeyTTLSeconds === undefined) auth.loginAccessKeyTTLSeconds = DEFAULT_LOGIN_ACCESS_KEY_TTL_SECONDS;
  providerDefaults(auth);
  for (const connector of Array.isArray(auth.connectors) ? auth.connectors : []) {
    if (isPlainObject(connector)) providerDefaults(connector);
  }

  const audit = block(out, "audit");
  if (audit && !audit.maxSize) audit.maxSize = DEFAULT_AUDIT_MAX_SIZE_MB;

  const ui = block(out, "uiSettings");
  for (const button of Array.isArray(ui?.navBarButtons) ? ui.navBarButtons : []) {
    if (isPlainObject(button) && !button.position) button.position = "BottomEnd";
  }

  const store = block(out, "secretStore");
  if (store) {
    if (!store.syncInterval) store.syncInterval = DEFAULT_SYNC_INTERVAL;
    if (!store.address && env.VAULT_ADDR) store.address = env.VAULT_ADDR;
  }

  const cost = block(out, "costControl");
  if (cost) {
    metricsDefaults(ensure(cost, "global"));
    metricsDefaults(ensure(cost, "cluster"));
  }
  return out as PlatformConfig;
}
