// Per-request state the pipeline attaches to a fastify request: request info, caller and RequestContext.
// Plugin routes (login endpoints) read it with requestState().

import type { FastifyRequest } from "fastify";
import type { RequestContext, ResourceStore, UserInfo } from "../registry/types.ts";
import type { RequestInfo } from "./request-info.ts";

export interface RequestState {
  /** performance.now() when the request arrived. */
  started: number;
  receivedAt: Date;
  /** Audit ID ("" when no hook listens). */
  id: string;
  info?: RequestInfo;
  /** The resource's store when the path names a served resource. */
  store?: ResourceStore;
  user?: UserInfo;
  /** Set once authorization passed. */
  context?: RequestContext;
  /** The failure answered, for the completion hook. */
  failure?: { reason?: string; message?: string };
  /** The object answered (before encoding) or the failure Status, for the completion hook. */
  responseObject?: unknown;
  /** Set while a watch stream owns the response (completion is reported when it ends). */
  watching?: boolean;
}

const STATE = "kube";

export function setRequestState(request: FastifyRequest, state: RequestState): void {
  (request as unknown as Record<string, RequestState>)[STATE] = state;
}

/** The pipeline's state of a request, once the request-info step ran. */
export function requestState(request: FastifyRequest): RequestState | undefined {
  return (request as unknown as Record<string, RequestState | undefined>)[STATE] ?? undefined;
}

export const REQUEST_STATE_PROPERTY = STATE;
