// Stores made before identity links (issue 29) hold users that single sign-on created with the provider's raw id as
// spec.subject. On the first start of this release each of them keeps its account: its subject becomes
// sso:<connector>:<provider id>, logged once per user. Only users whose spec.subject single sign-on wrote (its field
// manager owns the field) are touched, so nothing an administrator made or changed is linked by this. The connector
// is the one its Login keys name (or the only one configured); a user for whom it cannot be told, or whose provider
// id cannot be rebuilt (SAML without ssoIssuer, idpB without a known tenant id), is left as it is, with a warning
// that says how to link it. A marker in the store makes later starts skip all this.

import { isStatusError } from "../../apimachinery/errors.ts";
import type { OwnedAccessKey } from "../../apis/management/v1/ownedaccesskey.ts";
import { parseSsoSubject, ssoSubject } from "../../apis/management/v1/sso-subject.ts";
import type { User } from "../../apis/management/v1/user.ts";
import type { ConnectorSettings, SsoSettings } from "../../config/settings.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import { type KeyValueStore, StorageError } from "../../storage/types.ts";
import { configString, configStrings } from "./claims.ts";
import { SHARED_TENANTS } from "./idp-b-connector.ts";
import { SSO_MANAGER } from "./sso-accounts.ts";

export const QUALIFIED_MARKER = "/internal/migrations/sso-qualified-subjects";
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface QualifyOptions {
  storage: KeyValueStore;
  store: (plural: string) => GenericStore;
  settings: () => SsoSettings;
  logger?: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

export interface QualifyResult {
  /** Users whose subject was qualified, by name. */
  qualified: string[];
  /** Users made by single sign-on that were left unlinked, by name. */
  left: string[];
}

const system = () => systemContext("system:platform-sso", SSO_MANAGER);

/** Whether single sign-on wrote the user's spec.subject (and nobody changed it since). */
function subjectWrittenBySso(user: User): boolean {
  return (user.metadata.managedFields ?? []).some((entry) => {
    const spec = (entry.fieldsV1 as Record<string, unknown> | undefined)?.["f:spec"];
    return entry.manager === SSO_MANAGER && typeof spec === "object" && spec !== null && "f:subject" in spec;
  });
}

/** The provider id the new code would see for this old subject, or why it cannot be rebuilt. */
function providerId(connector: ConnectorSettings, old: string): { id: string } | { problem: string } {
  const config = connector.config;
  if (connector.kind === "oidc") {
    const prefix = configString(config, "usernamePrefix") ?? "";
    return { id: prefix && old.startsWith(prefix) ? old.slice(prefix.length) : old };
  }
  if (connector.kind === "saml") {
    const issuer = configString(config, "ssoIssuer");
    return issuer
      ? { id: `${issuer}|${old}` }
      : { problem: "the SAML connector has no ssoIssuer (the IdP's entity id)" };
  }
  if (connector.kind === "idpB") {
    const tenant = configString(config, "tenant") ?? "common";
    const allowed = configStrings(config, "allowedTenants");
    const tid = TENANT_ID.test(tenant) && !SHARED_TENANTS.has(tenant) ? tenant : allowed.length === 1 ? allowed[0] : "";
    return tid ? { id: `${tid.toLowerCase()}/${old}` } : { problem: "the idpB connector's tenant id is not known" };
  }
  return { id: old };
}

/** The connectors the user's Login keys came from (those recorded with the user's old subject). */
function connectorsByUser(keys: OwnedAccessKey[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const key of keys) {
    const user = key.spec?.user;
    const connector = key.spec?.identity?.connector;
    if (key.spec?.type !== "Login" || !user || !connector) continue;
    const set = out.get(user) ?? new Set<string>();
    set.add(`${connector}\n${key.spec?.identity?.userId ?? ""}`);
    out.set(user, set);
  }
  return out;
}

export async function qualifySsoSubjects(options: QualifyOptions): Promise<QualifyResult> {
  const result: QualifyResult = { qualified: [], left: [] };
  if (await options.storage.get(QUALIFIED_MARKER)) return result;
  const users = (await options.store("users").list(system(), {})).items as User[];
  const candidates = users.filter((u) => u.spec?.subject && !parseSsoSubject(u.spec.subject) && subjectWrittenBySso(u));
  if (candidates.length > 0) {
    const keys = (await options.store("ownedaccesskeys").list(system(), {})).items as OwnedAccessKey[];
    const byUser = connectorsByUser(keys);
    const configured = options.settings().connectors;
    for (const user of candidates) {
      const name = user.metadata.name ?? "";
      const old = user.spec?.subject ?? "";
      const named = [...(byUser.get(name) ?? [])]
        .map((entry) => entry.split("\n"))
        .filter(([, userId]) => userId === old)
        .map(([connector]) => connector);
      const ids = [...new Set(named)];
      const id = ids.length === 1 ? ids[0] : ids.length === 0 && configured.length === 1 ? configured[0].id : undefined;
      const connector = configured.find((c) => c.id === id);
      const rebuilt = connector
        ? providerId(connector, old)
        : { problem: "no configured connector is known to have made it" };
      if ("problem" in rebuilt) {
        result.left.push(name);
        options.logger?.warn(
          { user: name, subject: old, reason: rebuilt.problem },
          "a user made by single sign-on before identity links stays unlinked; an administrator links it by setting spec.subject to sso:<connector>:<provider user id>",
        );
        continue;
      }
      const subject = ssoSubject(connector!.id, rebuilt.id);
      try {
        await options
          .store("users")
          .patch(
            system(),
            { name },
            "merge",
            { metadata: { uid: user.metadata.uid, resourceVersion: user.metadata.resourceVersion }, spec: { subject } },
            { fieldManager: SSO_MANAGER },
          );
      } catch (error) {
        // Another replica qualified it first, or the user changed meanwhile: its next start's list is current.
        if (isStatusError(error) && (error.reason === "Conflict" || error.reason === "NotFound")) continue;
        throw error;
      }
      result.qualified.push(name);
      options.logger?.info(
        { user: name, subject },
        "a user made by single sign-on before identity links keeps its account: its subject is now connector-qualified",
      );
    }
  }
  try {
    await options.storage.create(QUALIFIED_MARKER, JSON.stringify({ at: new Date().toISOString() }));
  } catch (error) {
    if (!(error instanceof StorageError && error.storageCode === "KeyExists")) throw error;
  }
  return result;
}
