// Single sign-on wired into the platform: the connectors of the live settings, the logins in progress (sealed into
// the browser with the platform's cookie secrets, which every replica shares), the SAML assertion IDs already used
// (in the store, shared by every replica), the account mapping over the registry's stores, and the routes
// (sso-routes.ts).

import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { OwnedAccessKey } from "../apis/management/v1/ownedaccesskey.ts";
import type { LiveSettings, PlatformSettings } from "../config/settings.ts";
import type { AuthIndex, KeyEntry } from "../identity/auth-index.ts";
import { connectorFactories } from "../identity/sso/connector-factories.ts";
import { ConnectorSet } from "../identity/sso/connector-set.ts";
import { connectorWarnings } from "../identity/sso/connector-warnings.ts";
import { LoginStates } from "../identity/sso/login-state.ts";
import { SsoAccounts } from "../identity/sso/sso-accounts.ts";
import type { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { ssoRoutes } from "./sso-routes.ts";

export interface PlatformSsoOptions {
  storage: KeyValueStore;
  index: AuthIndex;
  fresh: () => Promise<void>;
  settings: LiveSettings;
  store: (plural: string) => GenericStore;
  /** The stored key behind a plain access key; a 401 StatusError saying why when it is not usable. */
  keyOf(accessKey: string): Promise<KeyEntry | undefined>;
  deleteKey(name: string, uid: string): Promise<void>;
  baseUrl(): string;
  /** The platform's cookie secrets (cookie-keys.ts). */
  cookieKeys: string[];
  logger?: Logger;
}

/** Logs each connector warning when it first applies: at start, and when a Config change brings it. */
function logConnectorWarnings(settings: LiveSettings, logger: Logger | undefined): () => void {
  if (!logger) return () => {};
  const warningsOf = (next: PlatformSettings) => next.auth.sso.connectors.flatMap((c) => connectorWarnings(c));
  const log = (next: PlatformSettings, previous?: PlatformSettings) => {
    const before = new Set(previous ? warningsOf(previous) : []);
    for (const warning of warningsOf(next)) if (!before.has(warning)) logger.warn({ warning }, warning);
  };
  log(settings.current());
  return settings.onChange(log);
}

/** The SSO routes; close() stops following the settings. */
export function platformSso(options: PlatformSsoOptions): { routes: (app: FastifyInstance) => void; close(): void } {
  const sso = () => options.settings.current().auth.sso;
  const connectors = new ConnectorSet(sso, connectorFactories(options.storage));
  const stopWarnings = logConnectorWarnings(options.settings, options.logger);
  const accounts = new SsoAccounts({
    index: options.index,
    fresh: options.fresh,
    store: options.store,
    settings: sso,
  });
  const routes = ssoRoutes({
    settings: options.settings,
    connectors,
    logins: new LoginStates({ secrets: options.cookieKeys }),
    accounts,
    baseUrl: options.baseUrl,
    keyOf: options.keyOf,
    deleteKey: options.deleteKey,
    async connectorOfKey(name) {
      const key = (await options
        .store("ownedaccesskeys")
        .get(systemContext("system:platform-sso", "virtualcluster-platform-sso"), { name })
        .catch(() => undefined)) as OwnedAccessKey | undefined;
      return key?.spec?.identity?.connector;
    },
    logger: options.logger,
  });
  return { routes, close: stopWarnings };
}
