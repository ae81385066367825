// Types the HTTP layer shares with its hook consumers (audit, metrics, composition root).

import type { UserInfo } from "../registry/types.ts";
import type { RequestInfo } from "./request-info.ts";

/** After authentication, before authorization (audit stage RequestReceived). */
export interface ReceivedRequest {
  /** Random per-request id (the audit ID). */
  id: string;
  method: string;
  requestInfo: RequestInfo;
  /** Absent when authentication failed. */
  user?: UserInfo;
  userAgent?: string;
  sourceIp?: string;
  receivedAt: Date;
}

/** After the response is complete (audit stage ResponseComplete; watches: when the stream ends). */
export interface CompletedRequest extends ReceivedRequest {
  code: number;
  /** Status reason and message of a failure (never a body, header or query value). */
  reason?: string;
  message?: string;
  latencySeconds: number;
}

export interface ApiServerHooks {
  onRequestReceived?(info: ReceivedRequest): void;
  onRequestComplete?(info: CompletedRequest): void;
}
