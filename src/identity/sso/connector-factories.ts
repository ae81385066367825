// One factory per provider kind: how a config block becomes a Connector. What outlives a connector's rebuild on a
// Config change (the SAML assertion IDs already used) is shared here.

import type { ProviderKind } from "../../config/settings.ts";
import type { ConnectorFactory } from "./connector-set.ts";
import { OidcConnector } from "./oidc-connector.ts";
import { SamlConnector } from "./saml-connector.ts";
import { SeenIds } from "./seen-ids.ts";

export function connectorFactories(): Partial<Record<ProviderKind, ConnectorFactory>> {
  const assertions = new SeenIds();
  return {
    oidc: (s) => new OidcConnector(s.id, s.config),
    saml: (s) => new SamlConnector(s.id, s.config, assertions),
  };
}
