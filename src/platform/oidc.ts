// The OpenID provider wired into the platform: its artifacts in the platform's store (encrypted, see
// SECRET_PREFIXES; every replica sees them), its accounts over the auth index, its refresh tokens as access keys,
// ID tokens signed by the platform's key ring, the person behind a browser found through the platform session
// cookie (a Login key), wrong client secrets throttled, and the sweep of expired artifacts (run by the leader).

import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { OwnedAccessKeySpec } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { SigningKeyRing } from "../auth/signing/key-ring.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { AuthIndex, KeyEntry } from "../identity/auth-index.ts";
import { BrowserArtifacts } from "../identity/oidc-provider/browser-artifacts.ts";
import { OidcAccounts } from "../identity/oidc-provider/oidc-accounts.ts";
import {
  type ClientThrottle,
  OIDC_MOUNT,
  PlatformOidcProvider,
} from "../identity/oidc-provider/platform-oidc-provider.ts";
import { RefreshTokenKeys } from "../identity/oidc-provider/refresh-token-keys.ts";
import { OidcStore } from "../identity/oidc-provider/store-adapter.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { oidcRoutes } from "./oidc-routes.ts";
import { CLEAR_SESSION_COOKIE, parseCookies, SESSION_COOKIE } from "./sso-routes.ts";

export interface PlatformOidcOptions {
  storage: KeyValueStore;
  index: AuthIndex;
  fresh: () => Promise<void>;
  settings: LiveSettings;
  signingKeys: SigningKeyRing;
  /** https://<platform host>: the provider's issuer is this plus /oidc. */
  baseUrl(): string;
  /** The stored key behind a plain access key; throws when it does not authenticate. */
  keyOf(accessKey: string): Promise<KeyEntry | undefined>;
  deleteKey(name: string, uid: string): Promise<void>;
  /** Creates an access key as the platform (a refresh token's); resolves to its name and uid. */
  createKey(spec: OwnedAccessKeySpec): Promise<{ name: string; uid: string }>;
  clientThrottle: ClientThrottle;
  /** The platform's cookie secrets (cookie-keys.ts): they sign the provider's cookies. */
  cookieKeys: string[];
  logger?: Logger;
}

export interface PlatformOidc {
  plugin: (app: FastifyInstance) => Promise<void>;
  /** Deletes expired artifacts (and the keys of expired refresh tokens); run by the leader. */
  sweep(): Promise<number>;
}

export async function createPlatformOidc(options: PlatformOidcOptions): Promise<PlatformOidc> {
  const { storage, index, settings, signingKeys, logger } = options;
  const accounts = new OidcAccounts({
    index,
    fresh: options.fresh,
    ssoClaimNames: () =>
      settings
        .current()
        .auth.sso.connectors.flatMap((c) =>
          c.kind === "oidc" && Array.isArray(c.config.allowedExtraClaims)
            ? c.config.allowedExtraClaims.filter((name): name is string => typeof name === "string")
            : [],
        ),
  });
  const refreshKeys = new RefreshTokenKeys({
    index,
    fresh: options.fresh,
    limits: () => settings.current().auth,
    userByUid: (uid) => accounts.userByUid(uid),
    clientName: (clientId) => settings.current().oidc.clients.find((c) => c.clientId === clientId)?.name,
    createKey: options.createKey,
    deleteKey: options.deleteKey,
    stampOf: (tokenId) => store.stampOf("RefreshToken", tokenId),
  });
  const store: OidcStore = new OidcStore({
    storage,
    stamp: (model, payload, expiresIn) =>
      model === "RefreshToken" ? refreshKeys.issue(payload, expiresIn) : accounts.stamp(model, payload),
    valid: async (model, payload, stamp) =>
      (await accounts.valid(model, payload, stamp)) &&
      (model !== "RefreshToken" || (await refreshKeys.valid(payload, stamp))),
    released: async (model, _payload, stamp) => {
      if (model === "RefreshToken") await refreshKeys.release(stamp);
    },
  });

  /** The Login key of a browser's platform session, when it still authenticates an enabled user. */
  const sessionKey = async (cookieHeader: string | undefined) => {
    const accessKey = parseCookies(cookieHeader).get(SESSION_COOKIE);
    if (!accessKey) return undefined;
    const key = await options.keyOf(accessKey).catch(() => undefined);
    // Only a Login key of a user, unscoped, stands for the person (a scoped key must not mint their identity).
    if (key?.type !== "Login" || !key.user || key.scope) return undefined;
    const user = index.user(key.user);
    return user && !user.disabled ? { key, user } : undefined;
  };
  const sessionPerson = async (cookieHeader: string | undefined) => {
    const session = await sessionKey(cookieHeader);
    return session ? { user: session.user, loginMs: session.key.createdMs } : undefined;
  };

  const provider = new PlatformOidcProvider({
    settings: () => settings.current().oidc,
    issuer: () => `${options.baseUrl()}${OIDC_MOUNT}`,
    signingKey: () => {
      const key = signingKeys.current();
      return { kid: key.kid, alg: key.alg, privateJwk: key.stored.privateJwk as Record<string, unknown> };
    },
    store,
    artifacts: new BrowserArtifacts({ secrets: options.cookieKeys, path: OIDC_MOUNT }),
    accounts,
    cookieKeys: options.cookieKeys,
    clientThrottle: options.clientThrottle,
    sessionPerson,
    async endPlatformSession(cookieHeader, accountId) {
      const session = await sessionKey(cookieHeader);
      if (!session || session.user.uid !== accountId) return [];
      await options.deleteKey(session.key.name, session.key.uid);
      return [CLEAR_SESSION_COOKIE];
    },
    logger,
  });

  return {
    plugin: oidcRoutes({ settings, provider, jwks: () => signingKeys.jwks(), sessionPerson }),
    sweep: () => store.sweep(),
  };
}
