// The raw body of a resource request, by the rules clients met when fastify read every body (plugin routes still
// have fastify read theirs): GET, HEAD and TRACE carry none; without a Content-Type, only a length other than 0 or
// a chunked body is read; a Content-Type that is no media type is 415 before reading; above 3 MiB, declared or
// streamed, 413; not all there within the body timeout (server-limits.ts), 408. The resource handler decodes the
// bytes per Content-Type.

import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { errors, type StatusError } from "../apimachinery/errors.ts";
import { requestReadTimeout, requestTimedOut } from "./client-error.ts";
import { PATCH_MEDIA_TYPES } from "./codec.ts";
import { MAX_BODY_BYTES } from "./error-status.ts";

/** Methods that may carry a body; other methods' bodies are left unread. */
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "QUERY"]);
/** `type/subtype` of RFC 9110 tokens, then parameters (not checked) or nothing. */
const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

/** Whether the request carries a body to read. Throws 415 for a Content-Type that is no media type. */
export function hasBody(method: string, headers: IncomingHttpHeaders): boolean {
  if (!BODY_METHODS.has(method)) return false;
  const contentType = headers["content-type"];
  if (contentType === undefined) {
    // RFC 10008: a QUERY names its media type.
    if (method === "QUERY") throw errors.badRequest("the request could not be understood");
    const length = headers["content-length"];
    return headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  }
  if (!MEDIA_TYPE.test(contentType)) {
    throw errors.unsupportedMediaType(["application/json", "application/yaml", ...PATCH_MEDIA_TYPES]);
  }
  return true;
}

/**
 * Reads the whole body (a copy: nothing keeps a view over the socket's buffer alive). Rejects with 413 past
 * MAX_BODY_BYTES, 408 when the server closed the connection at the body timeout, and 400 when the client goes away
 * before the end.
 */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = (error: StatusError) => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onError);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_BODY_BYTES) stop(errors.requestEntityTooLarge(MAX_BODY_BYTES));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      request.off("error", onError);
      resolve(Buffer.concat(chunks, received));
    };
    const onError = () =>
      stop(
        requestTimedOut(request.socket)
          ? requestReadTimeout()
          : errors.badRequest("the request body was not received in full"),
      );
    request.on("data", onData);
    request.once("end", onEnd);
    request.once("error", onError);
  });
}
