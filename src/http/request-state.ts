// Per-request state of the pipeline: what each step learned (request info, caller, RequestContext, body, answer).
// The resource pipeline keeps it in a local; on the fastify path it is attached to the request, where plugin
// routes (login endpoints) read it with requestState(). Audit records and metrics are built from it alone.

import type { IncomingMessage } from "node:http";
import { performance } from "node:perf_hooks";
import type { FastifyRequest } from "fastify";
import type { RequestContext, ResourceStore, UserInfo } from "../registry/types.ts";
import type { FlowTicket } from "./flow-control/flow-control.ts";
import type { ImpersonationRequest } from "./impersonation.ts";
import type { RequestInfo } from "./request-info.ts";
import type { HookSlot } from "./types.ts";

export interface RequestState extends HookSlot {
  /** The request as Node parsed it: method, headers and socket for audit, metrics and authentication. */
  raw: IncomingMessage;
  /** Path and query as the client sent them (mount prefix included). */
  requestUri: string;
  /** performance.now() when the request arrived. */
  started: number;
  receivedAt: Date;
  /** Audit ID ("" when no hook listens to this request). */
  id: string;
  info?: RequestInfo;
  /** The resource's store when the path names a served resource. */
  store?: ResourceStore;
  /** Who authenticated (the audit event's `user`). */
  user?: UserInfo;
  /** Whom the caller acts as, when it impersonates (Impersonate-User): the request runs as this identity. */
  impersonatedUser?: UserInfo;
  /**
   * The impersonation asked for, kept once its headers are dropped: an open watch resolves its caller again
   * (watch-caller-check.ts).
   */
  impersonation?: ImpersonationRequest;
  /** Set once authorization passed. */
  context?: RequestContext;
  /** The request body as read (undefined: the request has none). */
  body?: Buffer;
  /** The answer ends the connection (a refused oversize body, shutdown). */
  closeConnection?: boolean;
  /** What the request-body hook prepared (the audit log's request object), handed back at completion. */
  auditPrepared?: unknown;
  /** The request-body hook threw, so the request was refused before the registry ran. */
  auditPreparationFailed?: boolean;
  /** The failure answered, for the completion hook. */
  failure?: { reason?: string; message?: string };
  /** The object answered (before encoding) or the failure Status, for the completion hook. */
  responseObject?: unknown;
  /** Set while a watch stream owns the response (completion is reported when it ends). */
  watching?: boolean;
  /** The flow control seat the request holds until its answer is complete (request-flow.ts). */
  flow?: FlowTicket;
}

export function newRequestState(raw: IncomingMessage, requestUri: string, id: string): RequestState {
  // Every field from the start: one object shape for all requests.
  return {
    raw,
    requestUri,
    started: performance.now(),
    receivedAt: new Date(),
    id,
    info: undefined,
    store: undefined,
    user: undefined,
    impersonatedUser: undefined,
    impersonation: undefined,
    context: undefined,
    body: undefined,
    auditPrepared: undefined,
    auditPreparationFailed: false,
    closeConnection: false,
    failure: undefined,
    responseObject: undefined,
    watching: false,
    flow: undefined,
    hookValue: undefined,
  };
}

const STATE = "kube";
const ADMITTED = Symbol("admitted request state");

/** Hands an admitted request's state to fastify with the request (the pipeline admitted it; fastify routes it). */
export function handOver(state: RequestState): void {
  (state.raw as IncomingMessage & { [ADMITTED]?: RequestState })[ADMITTED] = state;
}

/** The state the pipeline handed over with this request, if it did. */
export function handedOver(raw: IncomingMessage): RequestState | undefined {
  return (raw as IncomingMessage & { [ADMITTED]?: RequestState })[ADMITTED];
}

export function setRequestState(request: FastifyRequest, state: RequestState): void {
  (request as unknown as Record<string, RequestState>)[STATE] = state;
}

/** The pipeline's state of a request fastify serves, once its onRequest hook ran. */
export function requestState(request: FastifyRequest): RequestState | undefined {
  return (request as unknown as Record<string, RequestState | undefined>)[STATE] ?? undefined;
}
