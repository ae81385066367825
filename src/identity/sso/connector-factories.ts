// One factory per provider kind: how a config block becomes a Connector. What outlives a connector's rebuild on a
// Config change (the SAML assertion IDs already used, kept in the store for every replica) is shared here.

import type { ProviderKind } from "../../config/settings.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { CodeHostAConnector } from "./code-host-a-connector.ts";
import { CodeHostBConnector } from "./code-host-b-connector.ts";
import type { ConnectorFactory } from "./connector-set.ts";
import { IdpAConnector } from "./idp-a-connector.ts";
import { IdpBConnector } from "./idp-b-connector.ts";
import { OidcConnector } from "./oidc-connector.ts";
import { SamlConnector } from "./saml-connector.ts";
import { SeenIds } from "./seen-ids.ts";

export function connectorFactories(storage: KeyValueStore): Partial<Record<ProviderKind, ConnectorFactory>> {
  const assertions = new SeenIds({ storage });
  return {
    oidc: (s) => new OidcConnector(s.id, s.config),
    codeHostA: (s) => new CodeHostAConnector(s.id, s.config),
    codeHostB: (s) => new CodeHostBConnector(s.id, s.config),
    idpA: (s) => new IdpAConnector(s.id, s.config),
    idpB: (s) => new IdpBConnector(s.id, s.config),
    saml: (s) => new SamlConnector(s.id, s.config, assertions),
  };
}
