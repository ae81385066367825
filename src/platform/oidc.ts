// The OpenID provider wired into the platform: its artifacts in the platform's store (encrypted, see
// SECRET_PREFIXES), its accounts over the auth index, ID tokens signed by the platform's key ring, the person behind
// a browser found through the platform session cookie (a Login key), and a periodic sweep of expired artifacts.

import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { SigningKeyRing } from "../auth/signing/key-ring.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { AuthIndex, KeyEntry } from "../identity/auth-index.ts";
import { OidcAccounts } from "../identity/oidc-provider/oidc-accounts.ts";
import { OIDC_MOUNT, PlatformOidcProvider } from "../identity/oidc-provider/platform-oidc-provider.ts";
import { OIDC_PREFIX, OidcStore } from "../identity/oidc-provider/store-adapter.ts";
import { type KeyValueStore, StorageError } from "../storage/types.ts";
import { oidcRoutes } from "./oidc-routes.ts";
import { CLEAR_SESSION_COOKIE, parseCookies, SESSION_COOKIE } from "./sso-routes.ts";

const COOKIE_KEYS = `${OIDC_PREFIX}cookie-keys`;
const DEFAULT_SWEEP_MS = 10 * 60 * 1000;

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
  sweepIntervalMs?: number;
  logger?: Logger;
}

export interface PlatformOidc {
  plugin: (app: FastifyInstance) => Promise<void>;
  close(): void;
}

/** The keys that sign the provider's cookies: made once, kept (encrypted) in the store. */
async function cookieKeys(storage: KeyValueStore): Promise<string[]> {
  const stored = await storage.get(COOKIE_KEYS);
  if (stored) return (JSON.parse(stored.value) as { keys: string[] }).keys;
  const keys = [randomBytes(32).toString("base64url")];
  try {
    await storage.create(COOKIE_KEYS, JSON.stringify({ keys }));
    return keys;
  } catch (error) {
    if (!(error instanceof StorageError && error.storageCode === "KeyExists")) throw error;
    return cookieKeys(storage);
  }
}

export async function createPlatformOidc(options: PlatformOidcOptions): Promise<PlatformOidc> {
  const { storage, index, settings, signingKeys, logger } = options;
  const accounts = new OidcAccounts({ index, fresh: options.fresh });
  const store = new OidcStore({
    storage,
    stamp: (model, payload) => accounts.stamp(model, payload),
    valid: (model, payload, stamp) => accounts.valid(model, payload, stamp),
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
    accounts,
    cookieKeys: await cookieKeys(storage),
    sessionPerson,
    async endPlatformSession(cookieHeader, accountId) {
      const session = await sessionKey(cookieHeader);
      if (!session || session.user.uid !== accountId) return [];
      await options.deleteKey(session.key.name, session.key.uid);
      return [CLEAR_SESSION_COOKIE];
    },
    logger,
  });

  const timer = setInterval(() => {
    store.sweep().catch((error) => logger?.warn({ err: String(error) }, "sweeping expired OpenID tokens failed"));
  }, options.sweepIntervalMs ?? DEFAULT_SWEEP_MS);
  timer.unref();

  return {
    plugin: oidcRoutes({ settings, provider, jwks: () => signingKeys.jwks(), sessionPerson }),
    close: () => clearInterval(timer),
  };
}
