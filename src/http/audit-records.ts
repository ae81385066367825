// The records the audit hooks receive, built from a request's pipeline state: the one place both the resource
// pipeline and the fastify path (non-resource paths, plugin routes) make them.

import { decodedValue } from "../registry/encoded-json.ts";
import { bodyMediaType, decodeBody } from "./codec.ts";
import type { RequestState } from "./request-state.ts";
import type { CompletedRequest, ReceivedRequest } from "./types.ts";

/** RequestReceived (and ResponseStarted of a watch). The state has its request info. */
export function receivedRequest(state: RequestState): ReceivedRequest {
  return {
    id: state.id,
    method: state.raw.method ?? "",
    requestUri: state.requestUri,
    requestInfo: state.info!,
    user: state.user,
    userAgent: state.raw.headers["user-agent"],
    sourceIp: state.raw.socket?.remoteAddress,
    receivedAt: state.receivedAt,
  };
}

/** ResponseComplete: the answer's code, the failure, and the request and response objects decoded on demand. */
export function completedRequest(state: RequestState, code: number, latencySeconds: number): CompletedRequest {
  const body = state.body;
  const requestBytes = body?.length;
  const patch = state.info?.verb === "patch";
  return {
    ...receivedRequest(state),
    code,
    latencySeconds,
    reason: state.failure?.reason,
    message: state.failure?.message,
    requestBytes,
    requestObject: body?.length
      ? () => decodeBody(body, bodyMediaType(state.raw.headers["content-type"], patch))
      : undefined,
    // Decoded only if a hook reads it (reads may answer with pre-encoded JSON).
    get responseObject() {
      state.responseObject = decodedValue(state.responseObject);
      return state.responseObject;
    },
  };
}
