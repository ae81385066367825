// What a login page and the log should say about a connector's trust settings: a shared idpB tenant that lets
// people of every tenant in (allowAllTenants), or one that refuses every login until tenants are listed.

import type { ConnectorSettings } from "../../config/settings.ts";
import { configString, configStrings } from "./claims.ts";
import { SHARED_TENANTS } from "./idp-b-connector.ts";

export function connectorWarnings(connector: ConnectorSettings): string[] {
  if (connector.kind !== "idpB") return [];
  const tenant = configString(connector.config, "tenant") ?? "common";
  if (!SHARED_TENANTS.has(tenant) || configStrings(connector.config, "allowedTenants").length > 0) return [];
  if (connector.config.allowAllTenants === true) {
    return [
      `${connector.id}: people of any tenant may log in through the shared tenant "${tenant}" (allowAllTenants); each gets an account of their own`,
    ];
  }
  return [
    `${connector.id}: every login is refused: the shared tenant "${tenant}" needs allowedTenants (or allowAllTenants)`,
  ];
}
