// What the identity module opens at start: the signing key ring and the token authenticator and issuer over it, the
// cookie secrets, and (on a shared store) the login failure counts shared with the other replicas.

import type { Logger } from "pino";
import { MAX_TOKEN_TTL_SECONDS } from "../apis/management/v1/directclusterendpointtoken.ts";
import type { LoginThrottle } from "../auth/login-throttle.ts";
import { SigningKeyRing } from "../auth/signing/key-ring.ts";
import type { SigningAlgorithm } from "../auth/signing/signing-key.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { AuthIndex } from "../identity/auth-index.ts";
import type { FactsLookup } from "../identity/resource-facts.ts";
import { TokenAuthenticator } from "../identity/token-authenticator.ts";
import { TokenIssuer } from "../identity/token-issuer.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { loadCookieKeys } from "./cookie-keys.ts";
import { shareLoginThrottle } from "./shared-login-throttle.ts";

export interface IdentityKeysOptions {
  storage: KeyValueStore;
  index: AuthIndex;
  fresh: () => Promise<void>;
  settings: LiveSettings;
  facts: FactsLookup;
  issuer: () => string;
  signingAlgorithm?: SigningAlgorithm;
  /** Other replicas share the store (etcd): the ring follows their rotations, failure counts are shared. */
  sharedStore?: boolean;
  throttle: LoginThrottle;
  logger?: Logger;
}

export interface IdentityKeys {
  signingKeys: SigningKeyRing;
  tokens: TokenAuthenticator;
  tokenIssuer: TokenIssuer;
  /** The platform's cookie secrets (cookie-keys.ts). */
  cookieKeys: string[];
  close(): void;
}

/** Opens the keys; on a failure half way, closes what it opened. */
export async function openIdentityKeys(options: IdentityKeysOptions): Promise<IdentityKeys> {
  const { storage, index, fresh, settings, logger } = options;
  const signingKeys = await SigningKeyRing.open({
    storage,
    maxTokenTTLSeconds: MAX_TOKEN_TTL_SECONDS,
    algorithm: options.signingAlgorithm,
    shared: options.sharedStore,
    onError: (error) => logger?.warn({ err: String(error) }, "pruning expired signing keys failed"),
  });
  let sharedThrottle: { close(): void } | undefined;
  try {
    // Replicas share failure counts through the store, so spreading guesses over them gains nothing.
    if (options.sharedStore) {
      sharedThrottle = await shareLoginThrottle({ storage, throttle: options.throttle, logger });
    }
    const cookieKeys = await loadCookieKeys(storage);
    const limits = () => settings.current().auth;
    return {
      signingKeys,
      tokens: new TokenAuthenticator({ ring: signingKeys, index, fresh, limits, facts: options.facts }),
      tokenIssuer: new TokenIssuer({
        ring: signingKeys,
        index,
        fresh,
        issuer: options.issuer,
        namespacePrefix: () => settings.current().projectNamespacePrefix,
      }),
      cookieKeys,
      close() {
        sharedThrottle?.close();
        signingKeys.close();
      },
    };
  } catch (error) {
    sharedThrottle?.close();
    signingKeys.close();
    throw error;
  }
}
