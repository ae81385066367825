// ServiceAccount tokens, as kube-apiserver issues them through the TokenRequest API
// (POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token): a JWT signed with a key kept in
// <data-dir>/service-account.key (0600), naming the ServiceAccount and its uid. A request with such a token
// authenticates as system:serviceaccount:<ns>:<name> (groups system:serviceaccounts, system:serviceaccounts:<ns>)
// while the ServiceAccount still exists with that uid; RBAC decides the rest.

import { hash, randomBytes } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { errors, isStatusError } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import { requestBearerToken } from "../auth/access-key-material.ts";
import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { Registry } from "../registry/registry.ts";
import { systemContext } from "../registry/system-context.ts";
import type { ActionHandler, UserInfo } from "../registry/types.ts";

// jose loads with the first token issued or presented: most clusters never see one, and it is a few MB resident.
let joseModule: Promise<typeof import("jose")> | undefined;
const jose = () => {
  joseModule ??= import("jose");
  return joseModule;
};

export const SERVICE_ACCOUNT_KEY_FILE = "service-account.key";
export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc";
const DEFAULT_EXPIRATION_SECONDS = 3600;
/** kube-apiserver's lower bound for expirationSeconds. */
const MIN_EXPIRATION_SECONDS = 600;
/** One year: a long-running process outside a pod keeps one token. */
const MAX_EXPIRATION_SECONDS = 365 * 24 * 3600;

/** Reads the signing key, creating it on the first start. */
async function signingKey(dataDir: string): Promise<Uint8Array> {
  const file = join(dataDir, SERVICE_ACCOUNT_KEY_FILE);
  try {
    const text = (await readFile(file, "utf8")).trim();
    if (text) {
      await chmod(file, 0o600);
      return Buffer.from(text, "base64url");
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32);
  await writeFile(file, `${key.toString("base64url")}\n`, { mode: 0o600 });
  return key;
}

interface TokenClaims {
  "kubernetes.io"?: { namespace?: string; serviceaccount?: { name?: string; uid?: string } };
}

/** Verified tokens kept (by digest, never the token), until each one's expiry. */
const MAX_VERIFIED = 10_000;

export class ServiceAccountTokens {
  readonly #key: Uint8Array;
  readonly #verified = new Map<string, { claims: TokenClaims; expiresMs: number }>();
  readonly #registry: Registry;

  private constructor(key: Uint8Array, registry: Registry) {
    this.#key = key;
    this.#registry = registry;
  }

  static async open(dataDir: string, registry: Registry): Promise<ServiceAccountTokens> {
    return new ServiceAccountTokens(await signingKey(dataDir), registry);
  }

  async issue(serviceAccount: KubeObject, expirationSeconds: number, audiences: string[]): Promise<string> {
    const { name = "", namespace = "", uid = "" } = serviceAccount.metadata;
    const now = Math.floor(Date.now() / 1000);
    const { SignJWT } = await jose();
    return new SignJWT({ "kubernetes.io": { namespace, serviceaccount: { name, uid } } })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(SERVICE_ACCOUNT_ISSUER)
      .setSubject(`system:serviceaccount:${namespace}:${name}`)
      .setAudience(audiences)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + expirationSeconds)
      .sign(this.#key);
  }

  /** The `token` subresource of serviceaccounts (TokenRequest, authentication.k8s.io/v1). */
  tokenRequest(): ActionHandler {
    return {
      kind: "TokenRequest",
      protobuf: { message: "k8s.io.api.authentication.v1.TokenRequest" },
      description: "TokenRequest requests a token for a given service account.",
      verbs: ["create"],
      schema: {
        spec: {
          type: "object",
          properties: {
            audiences: { type: "array", items: { type: "string" } },
            expirationSeconds: { type: "integer", format: "int64" },
          },
        },
        status: {
          type: "object",
          properties: { token: { type: "string" }, expirationTimestamp: { type: "string", format: "date-time" } },
        },
      },
      handle: async ({ body, parent }) => {
        const spec = (body?.spec ?? {}) as { audiences?: unknown; expirationSeconds?: unknown };
        const requested = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
        if (typeof requested !== "number" || !Number.isInteger(requested) || requested < MIN_EXPIRATION_SECONDS) {
          throw errors.badRequest(
            `spec.expirationSeconds: may not specify a duration less than ${MIN_EXPIRATION_SECONDS} seconds`,
          );
        }
        const seconds = Math.min(requested, MAX_EXPIRATION_SECONDS);
        const audiences =
          Array.isArray(spec.audiences) && spec.audiences.length > 0
            ? spec.audiences.map(String)
            : [SERVICE_ACCOUNT_ISSUER];
        const token = await this.issue(parent!, seconds, audiences);
        return {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          metadata: { name: parent!.metadata.name, namespace: parent!.metadata.namespace },
          spec: { audiences, expirationSeconds: seconds },
          status: {
            token,
            expirationTimestamp: new Date((Math.floor(Date.now() / 1000) + seconds) * 1000)
              .toISOString()
              .replace(/\.\d+Z$/, "Z"),
          },
        };
      },
    };
  }

  /** Recognizes tokens this server issued; any other bearer token is left to the next authenticator. */
  authenticator(): Authenticator {
    return {
      authenticate: async (request: AuthenticationRequest): Promise<UserInfo | undefined> => {
        const token = requestBearerToken(request) ?? "";
        if (token.split(".").length !== 3) return undefined;
        // A signature checked before is not checked again (a client sends the same token on every request and
        // WebCrypto's HMAC costs more than the rest of a GET); the ServiceAccount is still looked up each time.
        const digest = hash("sha256", token, "base64url");
        const verified = this.#verified.get(digest);
        if (verified && verified.expiresMs > Date.now()) return this.#userIfExists(verified.claims);
        const { decodeJwt, jwtVerify } = await jose();
        let issuer: string | undefined;
        try {
          issuer = decodeJwt(token).iss;
        } catch {
          return undefined;
        }
        if (issuer !== SERVICE_ACCOUNT_ISSUER) return undefined;
        let claims: TokenClaims & { exp?: number };
        try {
          claims = (await jwtVerify(token, this.#key, { issuer: SERVICE_ACCOUNT_ISSUER, algorithms: ["HS256"] }))
            .payload as TokenClaims & { exp?: number };
        } catch {
          throw errors.unauthorized();
        }
        if (this.#verified.size >= MAX_VERIFIED) this.#verified.delete(this.#verified.keys().next().value as string);
        this.#verified.set(digest, { claims, expiresMs: (claims.exp ?? 0) * 1000 });
        return this.#userIfExists(claims);
      },
    };
  }

  /** The ServiceAccount's user, while it exists with the uid the token names. */
  async #userIfExists(claims: TokenClaims): Promise<UserInfo> {
    const namespace = claims["kubernetes.io"]?.namespace ?? "";
    const account = claims["kubernetes.io"]?.serviceaccount ?? {};
    if (!(await this.#exists(namespace, account.name ?? "", account.uid ?? ""))) throw errors.unauthorized();
    return {
      name: `system:serviceaccount:${namespace}:${account.name}`,
      uid: account.uid,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
    };
  }

  /** A token stops working when its ServiceAccount is deleted (or replaced by one of the same name). */
  async #exists(namespace: string, name: string, uid: string): Promise<boolean> {
    const store = this.#registry.genericStore("", "serviceaccounts");
    try {
      const found = await store?.get(systemContext("system:serviceaccount-tokens", "tokens"), { namespace, name });
      return found?.metadata.uid === uid;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return false;
      throw error;
    }
  }
}
