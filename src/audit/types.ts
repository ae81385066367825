// What the audit log reads from the HTTP layer's hooks. Declared here (structurally equal to src/http/types.ts)
// so audit depends on no HTTP code.

import type { AuditLevel, AuditStage } from "../config/types.ts";

export type { AuditLevel, AuditStage };

export interface AuditUser {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface AuditRequestInfo {
  resourceRequest: boolean;
  verb: string;
  path: string;
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
}

export interface AuditRequest {
  id: string;
  method: string;
  /** Path and query as the client sent them. */
  requestUri?: string;
  requestInfo: AuditRequestInfo;
  /** Absent when authentication failed. */
  user?: AuditUser;
  /** Whom the user acts as (Kubernetes impersonation); logged as `impersonatedUser`. */
  impersonatedUser?: AuditUser;
  userAgent?: string;
  sourceIp?: string;
  receivedAt: Date;
  /** The server's per-request slot, the same in every hook call of the request (the logger keeps its state there). */
  slot?: { hookValue: unknown };
}

/** A request whose body was read, before it reaches the registry. */
export interface AuditBodyRequest extends AuditRequest {
  /** The request body decoded (JSON or YAML), computed only when called. */
  requestObject?: () => unknown;
  /** Size of the request body in bytes. */
  requestBytes?: number;
}

export interface AuditCompletion extends AuditBodyRequest {
  code: number;
  reason?: string;
  message?: string;
  /** The response object (before encoding); absent for watches and non-resource responses. */
  responseObject?: unknown;
  /** The response object as compact JSON, when the server has it encoded already (logged as is when it may). */
  responseJson?: string;
  /** What the request-body hook returned (a PreparedRequest from this logger), if it ran. */
  prepared?: unknown;
  /** The request-body hook threw: the request was refused with 500 before anything was stored. */
  preparationFailed?: boolean;
}
