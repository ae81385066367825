// Refresh tokens as access keys (OwnedAccessKey spec.oidcProvider: "if the token is a refresh token, information
// about it"). Every refresh token the provider issues is also an OwnedAccessKey of its user, of type
// OIDCRefreshToken, whose key is the refresh token itself (stored, as every key, as its SHA-256 digest only) and
// whose spec.oidcProvider says what it is for: clientId, redirectUri (where the code went), scopes, and the nonce
// as "sha256:<hex>" (the nonce itself stays in the encrypted store). So a person sees which applications may still
// act for them (their access keys, in kubectl or the console), and deleting or disabling that key ends the refresh
// token at once; the access tokens it already gave run out within their hour. Such a key is no credential of the
// platform's API (AccessKeyAuthenticator refuses it).
// The key is made before the token is stored (stamp), checked on every read of the token (valid), and deleted when
// the token is consumed by a rotation, destroyed, revoked with its grant or swept (release). The login-key sweeper
// deletes keys whose user's tokenGeneration moved on.

import { createHash } from "node:crypto";
import type { AdapterPayload } from "oidc-provider";
import type { OwnedAccessKeySpec } from "../../apis/management/v1/ownedaccesskey-schema.ts";
import type { AuthIndex, UserEntry } from "../auth-index.ts";
import { type KeyLimits, keyProblem, REFRESH_TOKEN_KEY_TYPE } from "../key-validity.ts";
import { errors, providerContext } from "./oidc-provider-module.ts";

export interface RefreshTokenKeysOptions {
  index: AuthIndex;
  /** Resolves once the index has seen every committed write. */
  fresh: () => Promise<void>;
  limits: () => KeyLimits;
  userByUid(uid: string): UserEntry | undefined;
  clientName(clientId: string): string | undefined;
  /** Creates the key (as the platform); resolves to its name and uid. */
  createKey(spec: OwnedAccessKeySpec): Promise<{ name: string; uid: string }>;
  deleteKey(name: string, uid: string): Promise<void>;
  /** What was stamped on a stored refresh token (the one a rotation replaces). */
  stampOf(tokenId: string): Promise<unknown>;
  now?: () => number;
}

/** Kept beside a refresh token in the store. */
export interface RefreshTokenStamp {
  key: string;
  uid: string;
  redirectUri?: string;
}

const digestOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

function isStamp(value: unknown): value is RefreshTokenStamp {
  const stamp = value as RefreshTokenStamp | undefined;
  return typeof stamp?.key === "string" && typeof stamp.uid === "string";
}

export class RefreshTokenKeys {
  readonly #options: RefreshTokenKeysOptions;
  readonly #now: () => number;

  constructor(options: RefreshTokenKeysOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Makes the key of a refresh token about to be stored; resolves to the token's stamp. */
  async issue(payload: AdapterPayload, expiresIn: number | undefined): Promise<RefreshTokenStamp> {
    const { jti, accountId, clientId, scope, nonce } = payload;
    if (typeof jti !== "string" || typeof accountId !== "string" || typeof clientId !== "string") {
      throw new Error("a refresh token without id, account or client");
    }
    const user = this.#options.userByUid(accountId);
    if (!user) throw new errors.InvalidGrant("the user of this grant no longer exists");
    const redirectUri = await this.#redirectUri();
    const oidcProvider: NonNullable<OwnedAccessKeySpec["oidcProvider"]> = { clientId };
    if (redirectUri) oidcProvider.redirectUri = redirectUri;
    if (typeof scope === "string") oidcProvider.scopes = scope;
    if (typeof nonce === "string" && nonce) oidcProvider.nonce = digestOf(nonce);
    const client = this.#options.clientName(clientId) || clientId;
    const spec: OwnedAccessKeySpec = {
      type: REFRESH_TOKEN_KEY_TYPE,
      user: user.name,
      key: jti,
      displayName: `${client} (OpenID refresh token)`,
      description: `Lets ${client} renew its sign-in through the platform's OpenID provider; delete it to end that.`,
      oidcProvider,
    };
    if (expiresIn !== undefined && expiresIn > 0) spec.ttl = expiresIn;
    const key = await this.#options.createKey(spec);
    return { key: key.name, uid: key.uid, ...(redirectUri ? { redirectUri } : {}) };
  }

  /** Whether a stored refresh token still counts: its key is there, enabled and within its lifetime. */
  async valid(payload: AdapterPayload, stamp: unknown): Promise<boolean> {
    // A consumed token must be found to be refused as a reuse (which revokes its grant).
    if (payload.consumed) return true;
    if (!isStamp(stamp)) return false;
    await this.#options.fresh();
    const key = this.#options.index.keyByName(stamp.key);
    if (!key || key.uid !== stamp.uid) return false;
    return keyProblem(key, this.#options.index, this.#now(), this.#options.limits()) === undefined;
  }

  /** The token was consumed, destroyed, revoked or swept: its key goes. */
  async release(stamp: unknown): Promise<void> {
    if (isStamp(stamp)) await this.#options.deleteKey(stamp.key, stamp.uid);
  }

  /** Where the code behind this token went: the code being exchanged, or the token a rotation replaces. */
  async #redirectUri(): Promise<string | undefined> {
    const entities = providerContext()?.oidc?.entities;
    if (entities?.AuthorizationCode?.redirectUri) return entities.AuthorizationCode.redirectUri;
    const rotated = entities?.RotatedRefreshToken?.jti;
    if (!rotated) return undefined;
    const stamp = await this.#options.stampOf(rotated);
    return isStamp(stamp) ? stamp.redirectUri : undefined;
  }
}
