// Schema of status.audit: whether and what to log (level shorthand or policy rules) and the log file rotation.

import { array, boolean, integer, item, object, string, stringList } from "../apimachinery/schema-builders.ts";
import { count, secret } from "./schema-builders.ts";

export const AUDIT_LEVELS = ["None", "Metadata", "Request", "RequestResponse"] as const;
export const AUDIT_STAGES = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"] as const;
/** Where a request goes. This platform serves management requests only; the others match nothing here. */
export const REQUEST_TARGETS = ["Management", "Cluster", "VirtualCluster"] as const;

const stages = (description: string) => array(item.string(AUDIT_STAGES), description);

const ruleSchema = object(
  {
    level: string("Level of the requests this rule matches: None, Metadata, Request or RequestResponse.", {
      enum: [...AUDIT_LEVELS],
    }),
    users: stringList("User names the rule applies to. Empty: every user."),
    userGroups: stringList("Groups the rule applies to; a user in any of them matches. Empty: every group."),
    verbs: stringList(
      "Verbs the rule applies to (get, list, watch, create, update, patch, delete...). Empty: every verb.",
    ),
    resources: array(
      object(
        {
          group: string("API group; empty is the core group."),
          resources: stringList(
            'Resources: "users", "users/password" (a subresource), "*" (all and their subresources), "users/*", "*/status". Empty: all resources of the group.',
          ),
          resourceNames: stringList("Object names; requires resources. Empty: every object."),
        },
        "Resources of one API group.",
      ),
      "Resources the rule applies to. Empty: all kinds in all groups. Cannot be combined with nonResourceURLs.",
    ),
    namespaces: stringList(
      'Namespaces the rule applies to; "" matches cluster-scoped resources. Empty: every namespace.',
    ),
    nonResourceURLs: stringList(
      'URL paths such as "/version" or "/healthz*"; "*" only as the full final step. Cannot be combined with resources or namespaces.',
    ),
    omitStages: stages("Stages for which no events are written (in addition to the policy's)."),
    requestTargets: array(
      item.string(REQUEST_TARGETS),
      "Request targets the rule applies to: Management, Cluster or VirtualCluster. Empty: every request.",
    ),
    clusters: stringList("Clusters the rule applies to; only cluster requests can match. Empty: no restriction."),
  },
  "An audit policy rule. The first rule matching a request decides its level.",
  ["level"],
);

export const auditSchema = object(
  {
    enabled: boolean("Log incoming API requests according to level or policy."),
    disableAgentSyncBack: boolean(
      "When true, connected virtual clusters do not send their audit events to the platform's datastore.",
    ),
    level: integer(
      "Shorthand instead of policy: 1 Metadata, 2 Request, 3 RequestResponse for every request (except the built-in exclusions). Cannot be combined with policy.",
      { minimum: 0, maximum: 3 },
    ),
    policy: object(
      {
        rules: array(ruleSchema, "Rules in order; the first match wins; no match means level None."),
        omitStages: stages("Stages for which no events are written, for every rule."),
      },
      "The audit policy.",
    ),
    dataStoreEndpoint: secret(
      "Where audit events are also stored and searched (the auditevents resource): empty for the embedded datastore in the data directory, or a PostgreSQL address postgres://user:password@host:port/database shared by several platform replicas.",
    ),
    dataStoreTTL: count("Hours to keep events in the datastore. Unset or 0: 720 (30 days)."),
    path: string("Path of the audit log file. Required when audit is enabled. Rotated files are kept beside it."),
    maxAge: count("Days to keep rotated files, by the timestamp in their names. Default: no age-based removal."),
    maxBackups: count("Number of rotated files to keep. Default: keep all."),
    maxSize: count("Size in megabytes (MiB) at which the file is rotated. Default 100."),
    compress: boolean("Compress rotated files with gzip. Default false."),
  },
  "Audit logging of API requests.",
);
