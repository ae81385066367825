// The platform's audit policy around what the config says: the `level` shorthand (1 Metadata, 2 Request,
// 3 RequestResponse) logs everything except the requests the original never logs by default; explicit policy
// rules are used as written. Whatever the policy, requests that carry credentials are logged at Metadata at most.

import { GROUP } from "../apis/management/v1/common.ts";
import type { AuditConfig, AuditPolicy, AuditPolicyRule } from "../config/types.ts";
import { type AuditAttributes, type AuditDecision, lowerLevel, ruleMatches } from "./policy.ts";
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
const METADATA_AT_MOST: AuditPolicyRule[] = [
  { level: "Metadata", verbs: ["create"], resources: [{ group: GROUP, resources: ["ownedaccesskeys"] }] },
  // The response is a kubeconfig with an access key or a client certificate and its private key.
  { level: "Metadata", resources: [{ group: GROUP, resources: ["virtualclusterinstances/kubeconfig"] }] },
  { level: "Metadata", resources: [{ group: GROUP, resources: ["users/password", "teams/password"] }] },
  { level: "Metadata", nonResourceURLs: ["/auth/*"] },
];

/** The policy the audit config describes (level shorthand or policy; an empty policy logs nothing). */
export function auditPolicyOf(audit: AuditConfig): AuditPolicy {
  const level = SHORTHAND_LEVELS[audit.level ?? 0] ?? "None";
  if (level !== "None") return { rules: [NEVER_LOGGED_BY_DEFAULT, { level }] };
  return audit.policy ?? {};
}

/** The capped form of each decision, made once: a decision is the same object for every request it applies to. */
const cappedDecisions = new WeakMap<AuditDecision, AuditDecision>();

/** Applies the Metadata cap of credential-carrying requests to a decision. */
export function capCredentialRequests(decision: AuditDecision, attributes: AuditAttributes): AuditDecision {
  if (decision.level === "None" || decision.level === "Metadata") return decision;
  if (!METADATA_AT_MOST.some((rule) => ruleMatches(rule, attributes))) return decision;
  let capped = cappedDecisions.get(decision);
  if (capped === undefined) {
    capped = { ...decision, level: lowerLevel(decision.level, "Metadata") };
    cappedDecisions.set(decision, capped);
  }
  return capped;
}
