// Answers requests Node's HTTP parser rejects (malformed request line or headers, header overflow, headers or body
// not received within their timeout) with a Kubernetes Status instead of fastify's own error body, then closes the
// connection. TLS handshakes that fail or time out are counted and closed without an answer.

import type { Socket } from "node:net";
import { errors, type StatusError } from "../apimachinery/errors.ts";
import type { ApiMetrics } from "./metrics.ts";

/** Sockets closed because a request did not arrive in time, so the body reader reports a 408, not a 400. */
const timedOut = new WeakSet<Socket>();

/** The Status of a request whose headers or body did not arrive within its timeout. */
export function requestReadTimeout(): StatusError {
  const error = errors.timeout("the request was not received in time");
  error.status.code = 408;
  return error;
}

/** Whether the server closed this connection because a request on it did not arrive in time. */
export function requestTimedOut(socket: Socket): boolean {
  return timedOut.has(socket);
}

function statusFor(code: string | undefined): { error: StatusError; line: string } {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return { error: requestReadTimeout(), line: "408 Request Timeout" };
  if (code === "HPE_HEADER_OVERFLOW") {
    const error = errors.badRequest("the request headers are too large");
    error.status.code = 431;
    return { error, line: "431 Request Header Fields Too Large" };
  }
  return { error: errors.badRequest("the request could not be parsed as HTTP"), line: "400 Bad Request" };
}

/** The server's 'clientError' handler (node:https also reports failed TLS handshakes there). */
export function clientErrorHandler(metrics: ApiMetrics): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    const code = error.code ?? "";
    // No HTTP spoken yet: nothing to answer.
    if (code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_")) {
      metrics.tlsHandshakeError();
      socket.destroy();
      return;
    }
    // A reset connection has nobody left to answer.
    if (code === "ECONNRESET" || socket.destroyed) return;
    if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
      metrics.requestReadTimeout();
      timedOut.add(socket);
    }
    // As Node's own handler: no answer once one has begun on this connection (say a 401 sent before a slow body).
    const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (socket.writable && !current?.headersSent) {
      const { error: status, line } = statusFor(code);
      const body = JSON.stringify(status.status);
      socket.write(
        `HTTP/1.1 ${line}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
