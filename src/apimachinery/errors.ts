// The one catalogue of API errors. Every failure a client can see is built here, as a Kubernetes Status
// with a stable reason and code, so messages stay identical across handlers (and match what kubectl expects).

import { formatBytes } from "../utils/byte-size.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";
import { type FieldError, fieldErrorBody, formatFieldError } from "./field-errors.ts";
import type { GroupKind, GroupResource, Status, StatusDetails } from "./types.ts";

export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "Invalid"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "InsufficientStorage"
  | "Timeout";

export class StatusError extends Error {
  readonly status: Status;
  /** Extra response headers (Retry-After). */
  readonly headers: Record<string, string>;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails, headers = {}) {
    super(message);
    this.name = "StatusError";
    this.status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
    if (details) this.status.details = details;
    this.headers = headers;
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason {
    return this.status.reason as StatusReason;
  }
}

export function isStatusError(value: unknown): value is StatusError {
  return value instanceof StatusError;
}

/** `users.management.platform.sh`, or `services` for the core group. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** `User.management.platform.sh`, or `Service` for the core group. */
export function qualifiedKind(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

function resourceDetails(gr: GroupResource, name?: string): StatusDetails {
  const details: StatusDetails = { group: gr.group, kind: gr.resource };
  if (name !== undefined) details.name = name;
  return details;
}

export const errors = {
  badRequest: (message: string): StatusError => new StatusError(400, "BadRequest", message),

  unauthorized: (message = "Unauthorized"): StatusError => new StatusError(401, "Unauthorized", message),

  forbidden: (gr: GroupResource, name: string, reason: string): StatusError => {
    const target = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
    return new StatusError(403, "Forbidden", `${target} is forbidden: ${reason}`, resourceDetails(gr, name));
  },

  /** A forbidden request that is not about a resource (a non-resource URL, a disabled endpoint). */
  forbiddenPath: (message: string): StatusError => new StatusError(403, "Forbidden", message),

  notFound: (gr: GroupResource, name: string): StatusError =>
    new StatusError(404, "NotFound", `${qualifiedResource(gr)} "${name}" not found`, resourceDetails(gr, name)),

  /** An unknown path or resource: the generic 404 of the Kubernetes API server. */
  /** Something other than a stored object is missing (an app's readme). */
  notFoundMessage: (message: string): StatusError => new StatusError(404, "NotFound", message),
  pathNotFound: (): StatusError =>
    new StatusError(404, "NotFound", "the server could not find the requested resource", {}),

  alreadyExists: (gr: GroupResource, name: string): StatusError =>
    new StatusError(
      409,
      "AlreadyExists",
      `${qualifiedResource(gr)} "${name}" already exists`,
      resourceDetails(gr, name),
    ),

  generateNameExhausted: (gr: GroupResource, name: string): StatusError =>
    new StatusError(
      409,
      "AlreadyExists",
      `${qualifiedResource(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`,
      { ...resourceDetails(gr, name), retryAfterSeconds: 1 },
      { "Retry-After": "1" },
    ),

  conflict: (gr: GroupResource, name: string, reason: string, causes?: StatusDetails["causes"]): StatusError => {
    const details = resourceDetails(gr, name);
    if (causes) details.causes = causes;
    return new StatusError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${reason}`,
      details,
    );
  },

  /** A stale resourceVersion on update. */
  modified: (gr: GroupResource, name: string): StatusError =>
    errors.conflict(
      gr,
      name,
      "the object has been modified; please apply your changes to the latest version and try again",
    ),

  /** A bare 409 with a preformatted message (server-side apply conflicts). */
  conflictMessage: (message: string, details: StatusDetails): StatusError =>
    new StatusError(409, "Conflict", message, details),

  invalid: (gk: GroupKind, name: string, fieldErrors: FieldError[]): StatusError => {
    const causes = fieldErrors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
    const rendered = fieldErrors.map(formatFieldError);
    const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(", ")}]`;
    return new StatusError(422, "Invalid", `${qualifiedKind(gk)} "${name}" is invalid: ${summary}`, {
      name,
      group: gk.group,
      kind: gk.kind,
      causes,
    });
  },

  /** A 422 not tied to fields, e.g. a JSON patch operation that cannot be applied. */
  unprocessable: (message: string): StatusError => new StatusError(422, "Invalid", message),

  /** 410 Expired: a continue token or resourceVersion older than the compacted history. */
  expired: (message: string): StatusError => new StatusError(410, "Expired", message),

  gone: (message: string): StatusError => new StatusError(410, "Gone", message),

  methodNotSupported: (gr: GroupResource, verb: string): StatusError =>
    new StatusError(
      405,
      "MethodNotAllowed",
      `${verb} is not supported on resources of kind "${qualifiedResource(gr)}"`,
      resourceDetails(gr),
    ),

  /** An HTTP method the path does not serve at all (no verb maps to it). */
  methodNotAllowed: (): StatusError =>
    new StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"),

  /**
   * A body (or what a patch makes of the object) nesting objects and lists deeper than the server takes.
   * `what` names it ("the request body"), `where` says where the limit is passed ("at position 1234").
   */
  nestedTooDeeply: (what: string, where?: string): StatusError =>
    new StatusError(
      400,
      "BadRequest",
      `${what} is nested too deeply${where ? ` ${where}` : ""}: objects and lists may nest at most ${MAX_NESTING_DEPTH} levels`,
    ),

  /** A JSON patch with more operations than the server applies. */
  tooManyPatchOperations: (count: number, max: number): StatusError =>
    new StatusError(
      413,
      "RequestEntityTooLarge",
      `The allowed maximum operations in a JSON patch is ${max}, got ${count}`,
    ),

  notAcceptable: (accepted: readonly string[]): StatusError =>
    new StatusError(406, "NotAcceptable", `only the following media types are accepted: ${accepted.join(", ")}`),

  unsupportedMediaType: (accepted: readonly string[]): StatusError =>
    new StatusError(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
    ),

  requestEntityTooLarge: (limitBytes: number): StatusError =>
    new StatusError(413, "RequestEntityTooLarge", `Request entity too large: limit is ${limitBytes}`),

  tooManyRequests: (message: string, retryAfterSeconds: number): StatusError =>
    new StatusError(
      429,
      "TooManyRequests",
      message,
      { retryAfterSeconds },
      { "Retry-After": String(retryAfterSeconds) },
    ),

  internal: (message = "an internal error occurred"): StatusError =>
    new StatusError(500, "InternalError", `Internal error occurred: ${message}`),

  serviceUnavailable: (message: string): StatusError => new StatusError(503, "ServiceUnavailable", message),

  /** 503 while the server stops: a request arriving then, or one its store closed under (clients retry elsewhere). */
  shuttingDown: (): StatusError => new StatusError(503, "ServiceUnavailable", "the server is shutting down"),

  timeout: (message: string): StatusError => new StatusError(504, "Timeout", message),

  /**
   * 507: the store is out of space. Kubernetes has no Status for it; 507 (RFC 4918) says exactly that the server
   * cannot store what the request needs, and unlike 503 no client retries it on its own. The file's path stays in
   * the server log.
   */
  insufficientStorage: (): StatusError =>
    new StatusError(
      507,
      "InsufficientStorage",
      "the server's store is out of disk space: writes fail until space is freed on the volume of its data directory (reads keep working)",
    ),

  /**
   * 507: the store passed its quota (--store-quota-bytes, like etcd's --quota-backend-bytes). Same reason as a full
   * disk, its own message: what is refused, what still works, and that it lifts by itself.
   */
  storeQuotaReached: (quotaBytes: number): StatusError =>
    new StatusError(
      507,
      "InsufficientStorage",
      `the server's store reached its quota of ${formatBytes(quotaBytes)} (--store-quota-bytes): creates and updates are refused until compaction brings it back under (reads and deletes keep working)`,
    ),
};

/** The 200 Status answered after an immediate delete. */
export function successStatus(details: StatusDetails): Status {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details, code: 200 };
}
