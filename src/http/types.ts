// Types the HTTP layer shares with its hook consumers (audit, metrics, composition root).

import type { UserInfo } from "../registry/types.ts";
import type { RequestInfo } from "./request-info.ts";

/** Where a hook keeps what it learned of a request between its calls. */
export interface HookSlot {
  hookValue: unknown;
}

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
  /** Whom the user acts as (Impersonate-User); set once the impersonation was allowed, so never at RequestReceived. */
  impersonatedUser?: UserInfo;
  userAgent?: string;
  sourceIp?: string;
  receivedAt: Date;
  /**
   * The same slot in every hook call of one request (the audit log keeps the request's policy decision and the
   * text its event lines share there), so a hook needs no lookup per call. Starts undefined.
   */
  slot: HookSlot;
}

/** The body was read; nothing has reached the registry yet. */
export interface BodyReadRequest extends ReceivedRequest {
  /** The request body decoded per its Content-Type, computed when called (audit levels Request and above). */
  requestObject?: () => unknown;
  /** Size of the request body in bytes. */
  requestBytes?: number;
}

/** After the response is complete (audit stage ResponseComplete; watches: when the stream ends). */
export interface CompletedRequest extends BodyReadRequest {
  code: number;
  /** Status reason and message of a failure (never a body, header or query value). */
  reason?: string;
  message?: string;
  latencySeconds: number;
  /** The object answered, before encoding, or the failure Status; absent for watches and non-resource paths. */
  responseObject?: unknown;
  /** The object answered as compact JSON, when the registry answered pre-encoded (GET, LIST, POST). */
  responseJson?: string;
  /** What onRequestBody returned for this request (undefined when it did not run). */
  prepared?: unknown;
  /** onRequestBody threw: the request was answered 500 before the registry ran. */
  preparationFailed?: boolean;
}

export interface ApiServerHooks {
  /**
   * Asked as each request arrives: whether the hooks want to hear about it. False skips every hook for that request
   * (and its answer carries no Audit-Id). Absent: always.
   */
  enabled?(): boolean;
  onRequestReceived?(info: ReceivedRequest): void;
  /**
   * A resource request's body was read and the registry has not run: a hook that logs request objects builds them
   * now and returns what onRequestComplete gets back as `prepared`. Throwing refuses the request with 500 before
   * anything is stored (no write without its audit event); the completion then says `preparationFailed`.
   */
  onRequestBody?(info: BodyReadRequest): unknown;
  /** A watch began streaming its response (audit stage ResponseStarted). */
  onResponseStarted?(info: ReceivedRequest): void;
  onRequestComplete?(info: CompletedRequest): void;
}
