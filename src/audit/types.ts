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
  userAgent?: string;
  sourceIp?: string;
  receivedAt: Date;
}

export interface AuditCompletion extends AuditRequest {
  code: number;
  reason?: string;
  message?: string;
  /** The request body decoded (JSON or YAML), computed only when called. */
  requestObject?: () => unknown;
  /** Size of the request body in bytes. */
  requestBytes?: number;
  /** The response object (before encoding); absent for watches and non-resource responses. */
  responseObject?: unknown;
}
