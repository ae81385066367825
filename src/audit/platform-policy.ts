// The platform's audit policy around what the config says: the `level` shorthand (1 Metadata, 2 Request,
// 3 RequestResponse) logs everything except the requests the original never logs by default and the steps that only
// start a login (anyone may send them; a flood of them must not fill the audit log or its datastore); explicit
// policy rules are used as written. Whatever the policy, requests that carry credentials are logged at Metadata at
// most.

import { GROUP } from "../apis/management/v1/common.ts";
import type { AuditConfig, AuditPolicy, AuditPolicyRule } from "../config/types.ts";
import {
  type AuditAttributes,
  type AuditDecision,
  type CompiledAuditPolicy,
  compileAuditPolicy,
  lowerLevel,
  ruleMatches,
} from "./policy.ts";
import type { AuditLevel } from "./types.ts";

export const SHORTHAND_LEVELS: readonly AuditLevel[] = ["None", "Metadata", "Request", "RequestResponse"];

/** Not logged under the level shorthand: identity lookups, token and kubeconfig issuance. */
export const NEVER_LOGGED_BY_DEFAULT: AuditPolicyRule = {
  level: "None",
  resources: [
    {
      group: GROUP,
      resources: [
        "selves",
        "selfsubjectaccessreviews",
        "directclusterendpointtokens",
        "virtualclusterinstances/kubeconfig",
      ],
    },
  ],
};

/** Logged at Metadata at most, under any policy: their bodies are credentials. */
export const METADATA_AT_MOST: AuditPolicyRule[] = [
  { level: "Metadata", verbs: ["create"], resources: [{ group: GROUP, resources: ["ownedaccesskeys"] }] },
  // The response is a kubeconfig with an access key or a client certificate and its private key.
  { level: "Metadata", resources: [{ group: GROUP, resources: ["virtualclusterinstances/kubeconfig"] }] },
  { level: "Metadata", resources: [{ group: GROUP, resources: ["users/password", "teams/password"] }] },
  { level: "Metadata", nonResourceURLs: ["/auth/*"] },
];

/**
 * GETs that only start a login or show a step of one, and write nothing: the login methods, a single sign-on start,
 * the OpenID provider's authorization request and interaction page, its discovery and keys. Their outcome (the
 * callback, a password login, the code exchange) is logged.
 */
const LOGIN_STARTS =
  /^\/(?:auth\/info|auth\/[^/]+\/login|oidc\/auth|oidc\/interaction\/[^/]+|oidc\/\.well-known\/openid-configuration|oidc\/jwks)$/;
const NOT_LOGGED: AuditDecision = { level: "None", omitStages: new Set() };

/** Whether a request only starts a login (see LOGIN_STARTS); not logged under the level shorthand. */
export function isLoginStart(info: AuditAttributes["info"]): boolean {
  return !info.resourceRequest && info.verb === "get" && LOGIN_STARTS.test(info.path);
}

/** The audit config's policy, compiled: auditPolicyOf(), and under the level shorthand no login starts. */
export function compilePlatformPolicy(audit: AuditConfig): CompiledAuditPolicy {
  const compiled = compileAuditPolicy(auditPolicyOf(audit));
  if ((SHORTHAND_LEVELS[audit.level ?? 0] ?? "None") === "None") return compiled;
  return (attributes) => (isLoginStart(attributes.info) ? NOT_LOGGED : compiled(attributes));
}

/** The policy the audit config describes (level shorthand or policy; an empty policy logs nothing). */
export function auditPolicyOf(audit: AuditConfig): AuditPolicy {
  const level = SHORTHAND_LEVELS[audit.level ?? 0] ?? "None";
  if (level !== "None") return { rules: [NEVER_LOGGED_BY_DEFAULT, { level }] };
  return audit.policy ?? {};
}

/**
 * The resource rules of METADATA_AT_MOST by the name they match (`resource` or `resource/subresource`), with
 * their verbs: those rules name resources of GROUP exactly and set nothing else (checked here), so a lookup gives
 * ruleMatches' answer without running the rules for every request.
 */
const CAPPED_RESOURCES = new Map<string, readonly string[] | undefined>();
/** The non-resource rules (run as they are: only login paths match them). */
const CAPPED_PATHS: AuditPolicyRule[] = [];
for (const rule of METADATA_AT_MOST) {
  const { level, verbs, resources, nonResourceURLs, ...other } = rule;
  if (Object.keys(other).length > 0) throw new Error("METADATA_AT_MOST: only verbs, resources and nonResourceURLs");
  if (nonResourceURLs) CAPPED_PATHS.push(rule);
  for (const { group, resources: names, resourceNames, ...more } of resources ?? []) {
    if (group !== GROUP || resourceNames || Object.keys(more).length > 0 || names?.some((n) => n.includes("*"))) {
      throw new Error("METADATA_AT_MOST: resource rules name resources of the management group exactly");
    }
    for (const name of names ?? []) CAPPED_RESOURCES.set(name, verbs);
  }
}

/** Whether a request carries credentials: one of METADATA_AT_MOST's rules matches it. */
export function carriesCredentials(attributes: AuditAttributes): boolean {
  const info = attributes.info;
  if (!info.resourceRequest) return CAPPED_PATHS.some((rule) => ruleMatches(rule, attributes));
  if (info.group !== GROUP) return false;
  const name = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  if (!CAPPED_RESOURCES.has(name)) return false;
  const verbs = CAPPED_RESOURCES.get(name);
  return !verbs?.length || verbs.includes(info.verb);
}

/** The capped form of each decision, made once: a decision is the same object for every request it applies to. */
const cappedDecisions = new WeakMap<AuditDecision, AuditDecision>();

/** Applies the Metadata cap of credential-carrying requests to a decision. */
export function capCredentialRequests(decision: AuditDecision, attributes: AuditAttributes): AuditDecision {
  if (decision.level === "None" || decision.level === "Metadata" || !carriesCredentials(attributes)) return decision;
  let capped = cappedDecisions.get(decision);
  if (capped === undefined) {
    capped = { ...decision, level: lowerLevel(decision.level, "Metadata") };
    cappedDecisions.set(decision, capped);
  }
  return capped;
}
