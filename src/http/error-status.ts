// Maps anything thrown while serving a request to a Kubernetes Status error. Our StatusErrors pass through;
// fastify's own errors (body too large, bad content type, bad URL) become their Kubernetes equivalents;
// everything else is an internal error the caller must log.

import { errors, isStatusError, type StatusError, StatusError as StatusErrorClass } from "../apimachinery/errors.ts";
import { storageStatus } from "../apimachinery/storage-status.ts";
import { PATCH_MEDIA_TYPES } from "./codec.ts";

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface MappedError {
  error: StatusError;
  /** True when the cause is a server fault (log it; never show its message). */
  internal: boolean;
}

const clientReasons: Record<number, () => StatusError> = {
  400: () => errors.badRequest("the request could not be understood"),
  404: () => errors.pathNotFound(),
  405: () =>
    new StatusErrorClass(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"),
  406: () => errors.notAcceptable(["application/json", "application/yaml"]),
  408: () => errors.timeout("the request did not complete in time"),
  413: () => errors.requestEntityTooLarge(MAX_BODY_BYTES),
  415: () => errors.unsupportedMediaType(["application/json", "application/yaml", ...PATCH_MEDIA_TYPES]),
};

function fastifyError(error: { code?: unknown; statusCode?: unknown; message?: unknown }): StatusError | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return errors.requestEntityTooLarge(MAX_BODY_BYTES);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return clientReasons[415]();
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return errors.badRequest("the request body length does not match its Content-Length");
    case "FST_ERR_BAD_URL":
      return errors.badRequest("the request URL is malformed");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return errors.badRequest("the request body is not valid JSON");
  }
  const status = typeof error.statusCode === "number" ? error.statusCode : 0;
  if (status >= 400 && status < 500) {
    const known = clientReasons[status];
    if (known) return known();
    return errors.badRequest(typeof error.message === "string" ? error.message : "bad request");
  }
  return undefined;
}

/** Turns any thrown value into a StatusError. */
export function toStatusError(error: unknown): MappedError {
  if (isStatusError(error)) return { error, internal: false };
  // Writes outside the registry (login, key use, passwords) reach the store directly: the one storage mapping.
  const stored = storageStatus(error);
  if (isStatusError(stored)) return { error: stored, internal: false };
  if (typeof error === "object" && error !== null) {
    const mapped = fastifyError(error as Record<string, unknown>);
    if (mapped) return { error: mapped, internal: false };
  }
  return { error: errors.internal(), internal: true };
}
