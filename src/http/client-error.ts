// Answers requests Node's HTTP parser rejects (malformed request line or headers, header overflow, request timeout)
// with a Kubernetes Status instead of fastify's own error body, then closes the connection.

import type { Socket } from "node:net";
import { errors, type StatusError } from "../apimachinery/errors.ts";

function statusFor(code: string | undefined): { error: StatusError; line: string } {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { error: errors.timeout("the request was not received in time"), line: "408 Request Timeout" };
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    const error = errors.badRequest("the request headers are too large");
    error.status.code = 431;
    return { error, line: "431 Request Header Fields Too Large" };
  }
  return { error: errors.badRequest("the request could not be parsed as HTTP"), line: "400 Bad Request" };
}

/** The server's 'clientError' handler. */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) {
    const { error: status, line } = statusFor(error.code);
    const body = JSON.stringify(status.status);
    socket.write(
      `HTTP/1.1 ${line}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
