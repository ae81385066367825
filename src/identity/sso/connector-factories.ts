// One factory per provider kind: how a config block becomes a Connector.

import type { ProviderKind } from "../../config/settings.ts";
import type { ConnectorFactory } from "./connector-set.ts";
import { OidcConnector } from "./oidc-connector.ts";

export function connectorFactories(): Partial<Record<ProviderKind, ConnectorFactory>> {
  return {
    oidc: (s) => new OidcConnector(s.id, s.config),
  };
}
