// DeleteOptions from a request body (kubectl always sends one) or, when the body is empty, from query
// parameters — never a mix, as in apiserver's delete handler.

import { errors } from "../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../apimachinery/field-errors.ts";
import { isPlainObject } from "../apimachinery/types.ts";
import type { DeleteOptions } from "../registry/types.ts";
import { dryRunFrom, type Query, queryValue } from "./query-options.ts";

const POLICIES = ["Foreground", "Background", "Orphan"] as const;
const BODY_API_VERSIONS = new Set(["v1", "meta.k8s.io/v1", "meta.k8s.io/v1beta1"]);

interface RawDeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun: string[];
  preconditions?: { uid?: string; resourceVersion?: string };
}

function typeError(field: string, expected: string): never {
  throw errors.badRequest(`DeleteOptions.${field} must be ${expected}`);
}

function fromBody(body: unknown): RawDeleteOptions {
  if (!isPlainObject(body)) throw errors.badRequest("the request body must be a DeleteOptions object");
  if (body.kind !== undefined && body.kind !== "" && body.kind !== "DeleteOptions") {
    throw errors.badRequest(`the request body must be a DeleteOptions, not kind ${JSON.stringify(body.kind)}`);
  }
  if (body.apiVersion !== undefined && body.apiVersion !== "" && !BODY_API_VERSIONS.has(String(body.apiVersion))) {
    throw errors.badRequest(`DeleteOptions in version ${JSON.stringify(body.apiVersion)} cannot be handled`);
  }
  const raw: RawDeleteOptions = { dryRun: [] };
  const { gracePeriodSeconds, propagationPolicy, orphanDependents, dryRun, preconditions } = body;
  if (gracePeriodSeconds !== undefined && gracePeriodSeconds !== null) {
    if (!Number.isSafeInteger(gracePeriodSeconds)) typeError("gracePeriodSeconds", "an integer");
    raw.gracePeriodSeconds = gracePeriodSeconds as number;
  }
  if (propagationPolicy !== undefined && propagationPolicy !== null) {
    if (typeof propagationPolicy !== "string") typeError("propagationPolicy", "a string");
    raw.propagationPolicy = propagationPolicy;
  }
  if (orphanDependents !== undefined && orphanDependents !== null) {
    if (typeof orphanDependents !== "boolean") typeError("orphanDependents", "a boolean");
    raw.orphanDependents = orphanDependents;
  }
  if (dryRun !== undefined && dryRun !== null) {
    if (!Array.isArray(dryRun) || !dryRun.every((v) => typeof v === "string")) typeError("dryRun", "a list of strings");
    raw.dryRun = dryRun as string[];
  }
  if (preconditions !== undefined && preconditions !== null) {
    if (!isPlainObject(preconditions)) typeError("preconditions", "an object");
    const { uid, resourceVersion } = preconditions;
    raw.preconditions = {};
    if (uid !== undefined && uid !== null) {
      if (typeof uid !== "string") typeError("preconditions.uid", "a string");
      raw.preconditions.uid = uid;
    }
    if (resourceVersion !== undefined && resourceVersion !== null) {
      if (typeof resourceVersion !== "string") typeError("preconditions.resourceVersion", "a string");
      raw.preconditions.resourceVersion = resourceVersion;
    }
  }
  return raw;
}

function fromQuery(query: Query): RawDeleteOptions {
  const raw: RawDeleteOptions = { dryRun: [] };
  const grace = queryValue(query, "gracePeriodSeconds");
  if (grace !== undefined && grace !== "") {
    if (!/^[-+]?\d+$/.test(grace) || !Number.isSafeInteger(Number(grace))) {
      throw errors.badRequest(`invalid integer value for query parameter gracePeriodSeconds: ${JSON.stringify(grace)}`);
    }
    raw.gracePeriodSeconds = Number(grace);
  }
  const policy = queryValue(query, "propagationPolicy");
  if (policy !== undefined && policy !== "") raw.propagationPolicy = policy;
  const orphan = queryValue(query, "orphanDependents");
  if (orphan !== undefined) {
    if (orphan === "true" || orphan === "1" || orphan === "") raw.orphanDependents = true;
    else if (orphan === "false" || orphan === "0") raw.orphanDependents = false;
    else
      throw errors.badRequest(`invalid boolean value for query parameter orphanDependents: ${JSON.stringify(orphan)}`);
  }
  const dryRun = query.dryRun;
  if (dryRun !== undefined) raw.dryRun = Array.isArray(dryRun) ? dryRun : [dryRun];
  const uid = queryValue(query, "preconditions.uid");
  const resourceVersion = queryValue(query, "preconditions.resourceVersion");
  if (uid || resourceVersion) {
    raw.preconditions = {};
    if (uid) raw.preconditions.uid = uid;
    if (resourceVersion) raw.preconditions.resourceVersion = resourceVersion;
  }
  return raw;
}

/**
 * Builds DeleteOptions from the decoded body (undefined when empty) or the query. Shape errors are 400;
 * contradictions (orphanDependents with propagationPolicy, unknown policy, dryRun other than All) are 422.
 */
export function parseDeleteOptions(body: unknown, query: Query): DeleteOptions {
  const raw = body === undefined ? fromQuery(query) : fromBody(body);
  const problems: FieldError[] = [];
  const options: DeleteOptions = {};
  if (raw.orphanDependents !== undefined && raw.propagationPolicy !== undefined) {
    problems.push(
      fieldError.invalid(
        "propagationPolicy",
        raw.propagationPolicy,
        "orphanDependents and deletionPropagation cannot be both set",
      ),
    );
  }
  if (raw.propagationPolicy !== undefined) {
    const policy = POLICIES.find((p) => p === raw.propagationPolicy);
    if (policy) options.propagationPolicy = policy;
    else problems.push(fieldError.notSupported("propagationPolicy", raw.propagationPolicy, [...POLICIES, "nil"]));
  }
  const dryRun = dryRunFrom(raw.dryRun);
  problems.push(...dryRun.errors);
  if (problems.length) throw errors.invalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", problems);
  if (dryRun.dryRun) options.dryRun = true;
  if (raw.gracePeriodSeconds !== undefined) options.gracePeriodSeconds = raw.gracePeriodSeconds;
  if (raw.orphanDependents !== undefined) options.orphanDependents = raw.orphanDependents;
  if (raw.preconditions) options.preconditions = raw.preconditions;
  return options;
}
