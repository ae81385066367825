// Checks of status.audit beyond the schema: level and policy are exclusive, a path is needed when enabled, and
// policy rules are well formed (the checks of the Kubernetes audit policy validation).

import { REDACTED } from "./redaction-marker.ts";

/** postgres:// or postgresql:// with a host. */
function isPostgresUrl(value: string): boolean {
  if (!/^postgres(ql)?:\/\//i.test(value)) return false;
  try {
    return new URL(value).hostname !== "";
  } catch {
    return false;
  }
}

import { type Problems, read } from "./problems.ts";
import type { PathSegment } from "./yaml-source.ts";

/** Verbs a rule can name: the Kubernetes verbs, the platform's, and HTTP methods of non-resource requests. */
const KNOWN_VERBS = new Set([
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "bind",
  "makeowner",
  "post",
  "put",
  "head",
  "options",
]);

const RESOURCE = /^(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?)(\/(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?))?$/;

function validateRule(rule: Record<string, unknown>, path: PathSegment[], p: Problems): void {
  const urls = read.list(rule, "nonResourceURLs");
  if (urls.length > 0 && (read.list(rule, "resources").length > 0 || read.list(rule, "namespaces").length > 0)) {
    p.forbidden([...path, "nonResourceURLs"], "rules cannot apply to both regular resources and non-resource URLs");
  }
  for (const [url, index] of read.strings(rule, "nonResourceURLs")) {
    const at = [...path, "nonResourceURLs", index];
    if (url === "*") continue;
    if (!url.startsWith("/")) p.invalid(at, url, "non-resource URL rules must begin with a '/' character");
    else if (url.slice(0, -1).includes("*")) {
      p.invalid(at, url, "non-resource URL wildcards ('*') must be the final character of the rule");
    }
  }
  read.list(rule, "resources").forEach((groupResources, index) => {
    const at = [...path, "resources", index];
    if (read.list(groupResources, "resourceNames").length > 0 && read.list(groupResources, "resources").length === 0) {
      p.required([...at, "resources"], "using resourceNames requires at least one resource");
    }
    for (const [resource, i] of read.strings(groupResources, "resources")) {
      if (!RESOURCE.test(resource)) {
        p.invalid(
          [...at, "resources", i],
          resource,
          'must be a resource, "resource/subresource", "*", "resource/*" or "*/subresource"',
        );
      }
    }
  });
  for (const [verb, index] of read.strings(rule, "verbs")) {
    if (!KNOWN_VERBS.has(verb)) p.warn([...path, "verbs", index], `unknown verb "${verb}" never matches`);
  }
  if (read.list(rule, "clusters").length > 0) {
    p.warn([...path, "clusters"], "only cluster requests match; this platform serves management requests only");
  }
}

export function validateAudit(audit: Record<string, unknown>, p: Problems): void {
  const path = ["audit"];
  const policy = read.object(audit, "policy");
  const hasPolicy = read.list(policy, "rules").length > 0 || read.list(policy, "omitStages").length > 0;
  if ((read.number(audit, "level") ?? 0) > 0 && hasPolicy) {
    p.forbidden([...path, "level"], "cannot be combined with policy");
  }
  if (read.bool(audit, "enabled") && !read.string(audit, "path")) {
    p.required([...path, "path"], "required when audit is enabled");
  }
  const endpoint = read.string(audit, "dataStoreEndpoint");
  if (endpoint && endpoint !== REDACTED && !isPostgresUrl(endpoint)) {
    // The value may hold a password: the message shows only its scheme.
    p.invalid(
      [...path, "dataStoreEndpoint"],
      REDACTED,
      "must be empty (the embedded datastore) or a PostgreSQL address postgres://user:password@host:port/database",
    );
  }
  read.list(policy, "rules").forEach((rule, index) => {
    if (rule && typeof rule === "object")
      validateRule(rule as Record<string, unknown>, [...path, "policy", "rules", index], p);
  });
}
