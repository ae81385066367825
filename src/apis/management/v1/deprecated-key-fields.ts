// The deprecated fields of access keys and endpoint tokens (the specification's Versioning list): still stored and
// honoured, and named in a `Warning` header on every write that sets them, as the Config's workspaceSubDomain is.

import type { AccessKeyScope, OwnedAccessKeySpec } from "./ownedaccesskey-schema.ts";

const SCOPE_WARNINGS: [keyof AccessKeyScope, string][] = [
  ["rules", "deprecated: use spec.scope.projects, spec.scope.spaces and spec.scope.virtualClusters"],
  ["allowPlatformCli", 'deprecated: use the role "platformCLI" in spec.scope.roles'],
];

const isSet = (value: unknown) =>
  value !== undefined && value !== null && value !== false && !(Array.isArray(value) && value.length === 0);

/** Warnings for the deprecated fields a scope sets. */
export function deprecatedScopeWarnings(scope: AccessKeyScope | undefined, path = "spec.scope"): string[] {
  return SCOPE_WARNINGS.filter(([field]) => isSet(scope?.[field])).map(([field, why]) => `${path}.${field}: ${why}`);
}

/** Warnings for the deprecated fields an OwnedAccessKey's spec sets. */
export function deprecatedKeyWarnings(spec: OwnedAccessKeySpec | undefined): string[] {
  const warnings: string[] = [];
  if (spec?.parent) warnings.push("spec.parent: deprecated and no longer used");
  if (spec?.oidcLogin && Object.keys(spec.oidcLogin).length > 0) {
    warnings.push("spec.oidcLogin: deprecated: use spec.identity");
  }
  return [...warnings, ...deprecatedScopeWarnings(spec?.scope)];
}
