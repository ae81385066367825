// Runs the authenticators in order over a request's headers and verified TLS client certificate.

import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { errors } from "../apimachinery/errors.ts";
import { bearerToken } from "../auth/access-key-material.ts";
import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { UserInfo } from "../registry/types.ts";

/** The DER of a verified client certificate, looked up once per TLS connection (keep-alive reuses it). */
const certificates = new WeakMap<object, Buffer | null>();

function clientCertificate(request: IncomingMessage): Buffer | undefined {
  const socket = request.socket as TLSSocket;
  // `authorized` is only true when the certificate chains to the configured client CA.
  if (socket?.authorized !== true || typeof socket.getPeerCertificate !== "function") return undefined;
  let der = certificates.get(socket);
  if (der === undefined) {
    const peer = socket.getPeerCertificate(false);
    der = peer?.raw ? peer.raw : null;
    certificates.set(socket, der);
  }
  return der ?? undefined;
}

/** The first authenticator that recognizes the credentials wins; none -> undefined. */
export async function authenticateRequest(
  authenticators: readonly Authenticator[],
  request: IncomingMessage,
): Promise<UserInfo | undefined> {
  if (authenticators.length === 0) return undefined;
  const input: AuthenticationRequest = {
    headers: request.headers,
    bearerToken: bearerToken(request.headers.authorization),
    remoteAddress: request.socket?.remoteAddress,
    connection: request.socket ?? undefined,
    clientCertificate: clientCertificate(request),
  };
  for (const authenticator of authenticators) {
    // Most authenticators answer "not mine" synchronously; awaiting only real promises saves a turn each.
    const answer = authenticator.authenticate(input);
    const user = answer instanceof Promise ? await answer : answer;
    if (user) return user;
  }
  return undefined;
}

/** Like authenticateRequest, but a request without recognized credentials is a 401. */
export async function requireUser(
  authenticators: readonly Authenticator[],
  request: IncomingMessage,
): Promise<UserInfo> {
  const user = await authenticateRequest(authenticators, request);
  if (!user) throw errors.unauthorized();
  return user;
}
