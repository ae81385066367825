// Types the HTTP layer shares with its hook consumers (audit, metrics, composition root).

import type { UserInfo } from "../registry/types.ts";
import type { RequestInfo } from "./request-info.ts";

/** After authentication, before authorization (audit stage RequestReceived). */
export interface ReceivedRequest {
  /** Random per-request id (the audit ID). */
  id: string;
  method: string;
  /** Path and query as the client sent them (mount prefix included). */
  requestUri: string;
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
  /** The request body decoded per its Content-Type, computed when called (audit levels Request and above). */
  requestObject?: () => unknown;
  /** Size of the request body in bytes. */
  requestBytes?: number;
  /** The object answered, before encoding, or the failure Status; absent for watches and non-resource paths. */
  responseObject?: unknown;
}

export interface ApiServerHooks {
  /**
   * Asked as each request arrives: whether the hooks want to hear about it. False skips every hook for that request
   * (and its answer carries no Audit-Id). Absent: always.
   */
  enabled?(): boolean;
  onRequestReceived?(info: ReceivedRequest): void;
  /** A watch began streaming its response (audit stage ResponseStarted). */
  onResponseStarted?(info: ReceivedRequest): void;
  onRequestComplete?(info: CompletedRequest): void;
}
