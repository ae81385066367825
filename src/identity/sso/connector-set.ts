// The connectors in force, built from the live settings: each configured block (and auth.connectors item) becomes
// a Connector on first use, and is rebuilt when its block changes, so a Config change takes effect at the next
// login without a restart. An unchanged block keeps its instance (and its cached discovery and keys).

import type { ConnectorSettings, ProviderKind, SsoSettings } from "../../config/settings.ts";
import { configString } from "./claims.ts";
import { connectorWarnings } from "./connector-warnings.ts";
import type { Connector } from "./types.ts";

export type ConnectorFactory = (settings: ConnectorSettings) => Connector;

export interface ConnectorInfo {
  id: string;
  displayName: string;
  type: ProviderKind;
  /** An OIDC block's `type` (display only: the product behind it, such as Keycloak). */
  providerType?: string;
  /** What an administrator should know about the connector's trust settings (connector-warnings.ts). */
  warnings?: string[];
}

export class ConnectorSet {
  private readonly settings: () => SsoSettings;
  private readonly factories: Partial<Record<ProviderKind, ConnectorFactory>>;
  private readonly built = new Map<string, { fingerprint: string; connector: Connector }>();

  constructor(settings: () => SsoSettings, factories: Partial<Record<ProviderKind, ConnectorFactory>>) {
    this.settings = settings;
    this.factories = factories;
  }

  /** The enabled connectors, for a login page (no secrets). */
  list(): ConnectorInfo[] {
    return this.settings()
      .connectors.filter((c) => this.factories[c.kind])
      .map((c) => {
        const providerType = c.kind === "oidc" ? configString(c.config, "type") : undefined;
        const warnings = connectorWarnings(c);
        return {
          id: c.id,
          displayName: c.displayName,
          type: c.kind,
          ...(providerType ? { providerType } : {}),
          ...(warnings.length > 0 ? { warnings } : {}),
        };
      });
  }

  settingsOf(id: string): ConnectorSettings | undefined {
    return this.settings().connectors.find((c) => c.id === id && this.factories[c.kind]);
  }

  /** The connector of this id as configured now; undefined when there is none. Throws when its block is unusable. */
  get(id: string): Connector | undefined {
    const settings = this.settingsOf(id);
    if (!settings) {
      this.built.delete(id);
      return undefined;
    }
    const fingerprint = JSON.stringify([settings.kind, settings.config]);
    const cached = this.built.get(id);
    if (cached && cached.fingerprint === fingerprint) return cached.connector;
    const connector = this.factories[settings.kind]!(settings);
    this.built.set(id, { fingerprint, connector });
    return connector;
  }
}
