// The platform's live settings: one object read by every subsystem that the platform config can change
// without a restart (access key limits, login, auth endpoint headers, project namespaces, /version, audit, and the
// Config's systems: cost control, secret store, apps, cloud).
// `platform start` flags seed it; the Config resource (and its file) replace it; readers call current() per use.

import {
  type AppsSettings,
  appsSettingsOf,
  type CloudSettings,
  type CostControlSettings,
  cloudSettingsOf,
  costControlSettingsOf,
  type SecretStoreSettings,
  secretStoreSettingsOf,
} from "./system-settings.ts";

export interface AuditSettings {
  enabled: boolean;
  /** Raw policy as parsed from the config's status.audit (evaluated by src/audit). */
  [field: string]: unknown;
}

export interface PlatformSettings {
  auth: {
    /** Global maximum life of any access key, seconds; 0 = no limit. */
    accessKeyMaxTTLSeconds: number;
    /** Seconds a Login key is kept before the sweeper deletes it; 0 = kept forever. */
    loginAccessKeyTTLSeconds: number;
    passwordLoginDisabled: boolean;
    /** Extra headers on the authentication endpoints. */
    customHttpHeaders: Record<string, string>;
    /** Single sign-on: the connectors of the config and what a login may create. */
    sso: SsoSettings;
  };
  /** Domain without scheme, as clients reach the platform. */
  platformHost: string;
  projectNamespacePrefix: string;
  authenticateVersionEndpoint: boolean;
  audit: AuditSettings;
  /** status.uiSettings as written (the web console reads it on every page load). */
  ui: Record<string, unknown>;
  disableConfigEndpoint: boolean;
  /** The platform as an OpenID provider (Config status.oidc), served under /oidc. */
  oidc: OidcProviderSettings;
  /** status.costControl: usage metrics, the Prometheus the platform runs or uses, the Cost page's prices. */
  costControl: CostControlSettings;
  /** status.secretStore: project secrets kept in a Vault KV version 2 store. */
  secretStore: SecretStoreSettings;
  /** status.apps: the chart catalog. */
  apps: AppsSettings;
  /** status.cloud: release channel and maintenance window. */
  cloud: CloudSettings;
}

/** One relying party of the platform's OpenID provider. */
export interface OidcClientSettings {
  name: string;
  clientId: string;
  /** Empty: a public client (PKCE required). Never log or return it. */
  clientSecret: string;
  redirectURIs: string[];
}

export interface OidcProviderSettings {
  /** Off: every /oidc path is a 404. On by default; without clients nobody can use it. */
  enabled: boolean;
  /** Allow "*" in the clients' redirect URIs. */
  wildcardRedirect: boolean;
  clients: OidcClientSettings[];
}

/** The provider kinds, named as their config blocks. */
export type ProviderKind = "oidc" | "codeHostA" | "codeHostB" | "idpA" | "idpB" | "saml";

/** One login connector: a built-in block (id = block name) or an item of auth.connectors. */
export interface ConnectorSettings {
  id: string;
  displayName: string;
  kind: ProviderKind;
  /** The provider block as written, secrets included (never log or return it). */
  config: Record<string, unknown>;
}

export interface SsoSettings {
  connectors: ConnectorSettings[];
  disableTeamCreation: boolean;
  disableUserCreation: boolean;
  /** Go regular expressions; only matching groups are saved (all when empty). */
  groupsFilters: string[];
}

export const DEFAULT_LOGIN_ACCESS_KEY_TTL_SECONDS = 20 * 24 * 60 * 60;

export function defaultSettings(platformHost = ""): PlatformSettings {
  return {
    auth: {
      accessKeyMaxTTLSeconds: 0,
      loginAccessKeyTTLSeconds: DEFAULT_LOGIN_ACCESS_KEY_TTL_SECONDS,
      passwordLoginDisabled: false,
      customHttpHeaders: {},
      sso: { connectors: [], disableTeamCreation: false, disableUserCreation: false, groupsFilters: [] },
    },
    platformHost,
    projectNamespacePrefix: "p-",
    authenticateVersionEndpoint: false,
    audit: { enabled: false },
    ui: {},
    disableConfigEndpoint: false,
    oidc: { enabled: true, wildcardRedirect: false, clients: [] },
    costControl: costControlSettingsOf(undefined),
    secretStore: secretStoreSettingsOf(undefined, {}),
    apps: appsSettingsOf(undefined),
    cloud: cloudSettingsOf(undefined),
  };
}

export type SettingsListener = (next: PlatformSettings, previous: PlatformSettings) => void;

export class LiveSettings {
  private value: PlatformSettings;
  private readonly listeners = new Set<SettingsListener>();

  constructor(initial: PlatformSettings) {
    this.value = Object.freeze(structuredClone(initial));
  }

  /** The settings in force now. Frozen: replace them with update(), never mutate. */
  current(): PlatformSettings {
    return this.value;
  }

  update(next: PlatformSettings): void {
    const previous = this.value;
    this.value = Object.freeze(structuredClone(next));
    for (const listener of this.listeners) listener(this.value, previous);
  }

  /** Returns the unsubscribe function. */
  onChange(listener: SettingsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
