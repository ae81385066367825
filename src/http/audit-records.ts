// The records the audit hooks receive, built from a request's pipeline state: the one place both the resource
// pipeline and the fastify path (non-resource paths, plugin routes) make them.

import { decodedValue, EncodedJson } from "../registry/encoded-json.ts";
import type { UserInfo } from "../registry/types.ts";
import { bodyMediaType, decodeBody } from "./codec.ts";
import type { RequestInfo } from "./request-info.ts";
import type { RequestState } from "./request-state.ts";
import type { BodyReadRequest, CompletedRequest, HookSlot, ReceivedRequest } from "./types.ts";

/** RequestReceived (and ResponseStarted of a watch). The state has its request info. */
export function receivedRequest(state: RequestState): ReceivedRequest {
  return {
    id: state.id,
    method: state.raw.method ?? "",
    requestUri: state.requestUri,
    requestInfo: state.info!,
    user: state.user,
    impersonatedUser: state.impersonatedUser,
    userAgent: state.raw.headers["user-agent"],
    sourceIp: state.raw.socket?.remoteAddress,
    receivedAt: state.receivedAt,
    slot: state,
  };
}

/** The request body decoded per its Content-Type, on demand; undefined without a body. */
function requestObjectOf(state: RequestState): (() => unknown) | undefined {
  const body = state.body;
  if (!body?.length) return undefined;
  const contentType = state.raw.headers["content-type"];
  return () => decodeBody(body, bodyMediaType(contentType, state.info?.verb === "patch"));
}

/** The body was read, before the registry runs. */
export function bodyReadRequest(state: RequestState): BodyReadRequest {
  return { ...receivedRequest(state), requestObject: requestObjectOf(state), requestBytes: state.body?.length };
}

/** ResponseComplete: the answer's code, the failure, and the request and response objects decoded on demand. */
export function completedRequest(state: RequestState, code: number, latencySeconds: number): CompletedRequest {
  return new CompletedRecord(state, code, latencySeconds);
}

/** A class rather than a literal with a getter: one object shape for every completion. */
class CompletedRecord implements CompletedRequest {
  readonly id: string;
  readonly method: string;
  readonly requestUri: string;
  readonly requestInfo: RequestInfo;
  readonly user: UserInfo | undefined;
  readonly impersonatedUser: UserInfo | undefined;
  readonly userAgent: string | undefined;
  readonly sourceIp: string | undefined;
  readonly receivedAt: Date;
  readonly code: number;
  readonly latencySeconds: number;
  readonly reason: string | undefined;
  readonly message: string | undefined;
  readonly requestBytes: number | undefined;
  readonly requestObject: (() => unknown) | undefined;
  readonly prepared: unknown;
  readonly preparationFailed: boolean;
  readonly slot: HookSlot;
  readonly #state: RequestState;

  constructor(state: RequestState, code: number, latencySeconds: number) {
    const raw = state.raw;
    this.id = state.id;
    this.method = raw.method ?? "";
    this.requestUri = state.requestUri;
    this.requestInfo = state.info!;
    this.user = state.user;
    this.impersonatedUser = state.impersonatedUser;
    this.userAgent = raw.headers["user-agent"];
    this.sourceIp = raw.socket?.remoteAddress;
    this.receivedAt = state.receivedAt;
    this.code = code;
    this.latencySeconds = latencySeconds;
    this.reason = state.failure?.reason;
    this.message = state.failure?.message;
    this.requestBytes = state.body?.length;
    this.requestObject = requestObjectOf(state);
    this.prepared = state.auditPrepared;
    this.preparationFailed = state.auditPreparationFailed === true;
    this.slot = state;
    this.#state = state;
  }

  /** The pre-encoded answer's text, if the registry gave one and no hook decoded it yet. */
  get responseJson(): string | undefined {
    const value = this.#state.responseObject;
    return value instanceof EncodedJson ? value.json : undefined;
  }

  /** Decoded only if a hook reads it (reads may answer with pre-encoded JSON). */
  get responseObject(): unknown {
    this.#state.responseObject = decodedValue(this.#state.responseObject);
    return this.#state.responseObject;
  }
}
