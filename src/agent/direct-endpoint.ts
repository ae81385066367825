// The agent's direct endpoint: HTTPS straight to the cluster, without the platform — the reason direct cluster
// endpoint tokens exist. A request carries a DirectClusterEndpointToken, verified offline against the platform's
// signing keys (fetched once, refreshed in the background, kept on disk, so the endpoint keeps working while the
// platform is down and across agent restarts): signature, issuer, audience and expiry, then its scope must reach
// this cluster (scope.clusters naming it or "*") or a space on it (scope.spaces: only that space's namespace, and
// discovery). The request then goes to the host as the token's user, impersonated (its teams as groups).
// What offline verification cannot know (a user disabled, deleted, or whose tokens were revoked by raising its
// tokenGeneration) the platform is asked for, once per token every few seconds (token-reviews.ts); while it cannot be
// answered the offline verdict stands, so a token revoked then works until its expiry: tokens are short-lived.

import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { isIP } from "node:net";
import { join } from "node:path";
import type { Duplex, Readable } from "node:stream";
import type { Logger } from "pino";
import { hostGroupName, hostUserName } from "../apis/management/v1/host-identity.ts";
import { bearerToken } from "../auth/access-key-material.ts";
import { parseRequestInfo } from "../http/request-info.ts";
import { sentImpersonation } from "../http/tunnel/tunnel-protocol.ts";
import { DISCOVERY_URLS } from "../identity/scope.ts";
import type { VerifiedToken } from "../identity/token-verifier.ts";
import { directEndpointHost } from "./agent-config.ts";
import {
  type HostCall,
  type HostForwarder,
  type HostIdentity,
  http1HasBody,
  responseSink,
  socketSink,
} from "./host-forwarder.ts";
import { tokenDigest } from "./token-reviews.ts";

export interface DirectEndpointOptions {
  cluster: string;
  /** Where its certificates live (<agent data dir>/direct). */
  dir: string;
  host: string;
  port: number;
  /** host[:port] clients use, when not `host:port` (the serving certificate names it too). */
  advertise?: string;
  /** Verifies a direct cluster endpoint token offline; throws when it is not valid (or keys are unknown yet). */
  verify(token: string): Promise<VerifiedToken>;
  /**
   * Why the platform refuses a token that verified offline (revoked since), if it says so (token-reviews.ts);
   * `digest` is the token's tokenDigest().
   */
  refusal?(token: string, digest: string): Promise<string | undefined>;
  /** The host namespace of a space kept here. */
  spaceNamespace(project: string, space: string): string | undefined;
  /** Every space kept here, as project and namespace (scope.spaces with space "*"). */
  spaces(): { project: string; namespace: string }[];
  forwarder: HostForwarder;
  logger?: Logger;
}

export interface RunningDirectEndpoint {
  url: string;
  caPem: string;
  close(): Promise<void>;
}

const MAX_VERIFIED = 10_000;
const RENEW_BEFORE_MS = 30 * 86_400_000;

/**
 * The endpoint's CA and serving certificate (<dir>/pki), which `cluster connect` made: read as they are while they
 * name every host and are not close to expiry; otherwise made anew (the certificate library, a few tens of MB
 * resident, loads only then).
 */
async function servingCertificates(
  dir: string,
  hosts: string[],
): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  try {
    const [caPem, certPem, keyPem] = await Promise.all(
      ["ca.crt", "serving.crt", "serving.key"].map((file) => readFile(join(dir, "pki", file), "utf8")),
    );
    const cert = new X509Certificate(certPem);
    const names = hosts.every((host) => (isIP(host) ? cert.checkIP(host) : cert.checkHost(host)) !== undefined);
    if (names && Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS) return { caPem, certPem, keyPem };
  } catch {
    // missing or unreadable: make them
  }
  const { ensureServingCertificates } = await import("../pki/tls.ts");
  return ensureServingCertificates({ dataDir: dir, hosts });
}

class Refusal extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

const statusBody = (refusal: Refusal) =>
  JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    reason: refusal.reason,
    code: refusal.code,
    message: refusal.message,
  });

/**
 * The token a connection sent last and its digest: a client sends the same token on every request of a kept-alive
 * connection, and comparing it costs far less than hashing it again (twice: the verified tokens and the platform's
 * reviews are both kept by digest). Held only while the connection lives.
 */
const lastTokens = new WeakMap<object, { bearer: string; digest: string }>();

function connectionTokenDigest(connection: object, bearer: string): string {
  const last = lastTokens.get(connection);
  if (last?.bearer === bearer) return last.digest;
  const digest = tokenDigest(bearer);
  lastTokens.set(connection, { bearer, digest });
  return digest;
}

const isDiscovery = (path: string) =>
  DISCOVERY_URLS.some((pattern) => (pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern));

export async function startDirectEndpoint(options: DirectEndpointOptions): Promise<RunningDirectEndpoint> {
  const { cluster, logger } = options;
  const advertisedHost = directEndpointHost(options);
  const tls = await servingCertificates(options.dir, [advertisedHost, options.host]);

  /** Tokens verified before, by digest (never the token), until each one's expiry: a signature is checked once. */
  const seen = new Map<string, VerifiedToken>();
  const verified = async (bearer: string, digest: string): Promise<VerifiedToken> => {
    const known = seen.get(digest);
    if (known && known.exp * 1000 > Date.now()) return known;
    let token: VerifiedToken;
    try {
      token = await options.verify(bearer);
    } catch (error) {
      throw new Refusal(401, "Unauthorized", `invalid direct cluster endpoint token: ${(error as Error).message}`);
    }
    if (seen.size >= MAX_VERIFIED) seen.delete(seen.keys().next().value as string);
    seen.set(digest, token);
    return token;
  };

  /** Namespaces a scoped token reaches on this cluster; undefined: all of it. */
  const reach = (token: VerifiedToken): Set<string> | undefined => {
    const scope = token.scope;
    if (!scope) {
      throw new Refusal(
        403,
        "Forbidden",
        `the token is not scoped to cluster "${cluster}": request one with scope.clusters (or scope.spaces) naming it`,
      );
    }
    if ((scope.clusters ?? []).some((entry) => entry.cluster === "*" || entry.cluster === cluster)) return undefined;
    const namespaces = new Set<string>();
    for (const { project, space } of scope.spaces ?? []) {
      if (!project) continue;
      if (space === "*" || !space) {
        for (const kept of options.spaces())
          if (project === "*" || kept.project === project) namespaces.add(kept.namespace);
      } else {
        const namespace = options.spaceNamespace(project, space);
        if (namespace) namespaces.add(namespace);
      }
    }
    if (namespaces.size === 0) {
      throw new Refusal(403, "Forbidden", `the token's scope does not include cluster "${cluster}" or a space on it`);
    }
    return namespaces;
  };

  /** The identity to impersonate for the request, or a refusal. */
  const admit = async (request: IncomingMessage): Promise<HostIdentity> => {
    const impersonation = sentImpersonation(request.headers);
    if (impersonation) {
      throw new Refusal(
        403,
        "Forbidden",
        `the header ${impersonation} is not accepted: requests act as the token's user`,
      );
    }
    const bearer = bearerToken(request.headers.authorization);
    if (!bearer) throw new Refusal(401, "Unauthorized", "a direct cluster endpoint token is required");
    const digest = connectionTokenDigest(request.socket, bearer);
    const token = await verified(bearer, digest);
    const refused = await options.refusal?.(bearer, digest);
    if (refused)
      throw new Refusal(401, "Unauthorized", `the platform refused this direct cluster endpoint token: ${refused}`);
    const namespaces = reach(token);
    if (namespaces) {
      const [path] = (request.url ?? "/").split("?");
      const info = parseRequestInfo(request.method ?? "GET", path);
      const allowed = info.resourceRequest ? namespaces.has(info.namespace ?? "") : isDiscovery(info.path);
      if (!allowed) {
        throw new Refusal(
          403,
          "Forbidden",
          `the token reaches only the namespaces of its spaces on cluster "${cluster}" (${[...namespaces].join(", ")})`,
        );
      }
    }
    if (token.kind === "Team") return { user: hostUserName("Team", token.name), groups: [hostGroupName(token.name)] };
    return { user: hostUserName("User", token.name), groups: (token.teams ?? []).map(hostGroupName) };
  };

  /** The call to forward for an admitted request. */
  const callOf = (request: IncomingMessage, identity: HostIdentity, body: Readable): HostCall => ({
    method: request.method ?? "GET",
    path: request.url ?? "/",
    headers: request.headers,
    identity,
    body,
    hasBody: http1HasBody(request.headers),
  });

  /** A refusal (or an unexpected failure, logged) as the Status to answer. */
  const refusalOf = (error: unknown): Refusal => {
    if (error instanceof Refusal) return error;
    logger?.error({ err: String(error) }, "direct endpoint request failed");
    return new Refusal(500, "InternalError", "internal error");
  };

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    try {
      const identity = await admit(request);
      await options.forwarder.forward(callOf(request, identity, request), responseSink(response));
    } catch (error) {
      const refusal = refusalOf(error);
      if (response.headersSent) return void response.destroy();
      const body = statusBody(refusal);
      response.writeHead(refusal.code, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      response.end(body);
    }
  };

  const upgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    try {
      const identity = await admit(request);
      if (head.length) socket.unshift(head);
      const upgradeTo = request.headers.upgrade ?? "";
      await options.forwarder.forward(
        { ...callOf(request, identity, socket), upgrade: upgradeTo },
        socketSink(socket, upgradeTo),
      );
    } catch (error) {
      const refusal = refusalOf(error);
      const body = statusBody(refusal);
      socket.end(
        `HTTP/1.1 ${refusal.code} ${refusal.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    }
  };

  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
    void serve(request, response);
  });
  server.on("upgrade", (request, socket, head) => void upgrade(request, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `https://${options.advertise ?? `${advertisedHost.includes(":") ? `[${advertisedHost}]` : advertisedHost}:${port}`}`;
  logger?.info({ url }, "direct endpoint listening");
  return {
    url,
    caPem: tls.caPem,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
