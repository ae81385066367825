// Checks of status.auth beyond the schema: provider blocks (required ids, addresses, SAML trust), connectors
// (unique ids, exactly one provider), header names and values, and the groups filters as RE2 expressions.

import { goRegexpProblem, isHeaderName, isHeaderValue, isHttpUrl } from "./formats.ts";
import { type Problems, read } from "./problems.ts";
import { PROVIDERS, SAML_PERSISTENT_NAME_ID } from "./schema-auth.ts";
import type { PathSegment } from "./yaml-source.ts";

const URL_FIELDS: Record<string, string[]> = {
  oidc: ["issuerUrl", "redirectURI", "postLogoutRedirectURI"],
  codeHostA: ["redirectURI"],
  codeHostB: ["redirectURI", "baseURL"],
  idpA: ["redirectURI"],
  idpB: ["redirectURI"],
  saml: ["redirectURI", "ssoURL"],
};

/** What a provider cannot work without. */
const REQUIRED_FIELDS: Record<string, string[]> = {
  oidc: ["issuerUrl", "clientId"],
  codeHostA: ["clientId"],
  codeHostB: ["clientId"],
  idpA: ["clientId"],
  idpB: ["clientId"],
  saml: ["ssoURL"],
};

/** The last components of the SAML NameID formats (src/identity/sso/saml-connector.ts expands them). */
const NAME_ID_SHORT_FORMS = [
  "unspecified",
  "emailaddress",
  "x509subjectname",
  "windowsdomainqualifiedname",
  "encrypted",
  "entity",
  "kerberos",
  "persistent",
  "transient",
];
const CONNECTOR_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SHARED_TENANTS = ["common", "consumers", "organizations"];
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// The padding and the whitespace after it as one optional group: two "\s" quantifiers side by side were quadratic.
const BASE64 = /^[A-Za-z0-9+/\s]*(?:={1,2}\s*)?$/;

function validateProvider(kind: string, block: Record<string, unknown>, path: PathSegment[], p: Problems): void {
  for (const field of REQUIRED_FIELDS[kind] ?? []) {
    if (!read.string(block, field)) p.required([...path, field]);
  }
  for (const field of URL_FIELDS[kind] ?? []) {
    const value = read.string(block, field);
    if (value && !isHttpUrl(value)) p.invalid([...path, field], value, "must be an absolute http(s) address");
  }
  if (kind === "idpA" && read.string(block, "serviceAccountFilePath") && !read.string(block, "adminEmail")) {
    p.required([...path, "adminEmail"], "required when serviceAccountFilePath is set");
  }
  if (kind === "idpB") validateIdpBTenants(block, path, p);
  if (kind === "oidc" && read.string(block, "usernameClaim") === "email") {
    p.warn(
      [...path, "usernameClaim"],
      "makes the e-mail address the identity: logins without email_verified true are refused, and an address given to someone else later reaches the same account; prefer sub",
    );
  }
  if (kind === "saml") {
    const format = read.string(block, "nameIDPolicyFormat");
    if (format && !format.startsWith("urn:") && !NAME_ID_SHORT_FORMS.includes(format.toLowerCase())) {
      p.invalid(
        [...path, "nameIDPolicyFormat"],
        format,
        "must be a URN or one of its short forms, such as emailAddress",
      );
    } else if (format && format.toLowerCase() !== "persistent" && format !== SAML_PERSISTENT_NAME_ID) {
      p.warn(
        [...path, "nameIDPolicyFormat"],
        "asks for a NameID that is not persistent: only a persistent NameID identifies a person, and responses with any other format are refused",
      );
    }
    const caData = read.string(block, "caData");
    if (!caData && !read.string(block, "ca") && !read.bool(block, "insecureSkipSignatureValidation")) {
      p.required([...path, "caData"], "one of caData, ca or insecureSkipSignatureValidation must be set");
    }
    if (caData && !BASE64.test(caData)) p.invalid([...path, "caData"], "(certificate data)", "must be base64");
    if (read.bool(block, "filterGroups") && read.list(block, "allowedGroups").length === 0) {
      p.warn([...path, "filterGroups"], "has no effect without allowedGroups");
    }
  }
}

/** idpB: groups need an organisation tenant; a shared tenant needs allowedTenants or allowAllTenants (else warned). */
function validateIdpBTenants(block: Record<string, unknown>, path: PathSegment[], p: Problems): void {
  const tenant = read.string(block, "tenant") ?? "common";
  const shared = SHARED_TENANTS.includes(tenant);
  if (shared && read.list(block, "groups").length > 0) {
    p.invalid([...path, "tenant"], tenant, "groups need an organisation tenant (a tenant id or name)");
  }
  const allowed = read.strings(block, "allowedTenants");
  for (const [id, index] of allowed) {
    if (!TENANT_ID.test(id)) p.invalid([...path, "allowedTenants", index], id, "must be a tenant id (a GUID)");
  }
  const allowAll = read.bool(block, "allowAllTenants");
  if (allowAll && allowed.length > 0) {
    p.forbidden([...path, "allowAllTenants"], "cannot be combined with allowedTenants: list the tenants, or allow all");
  } else if (allowAll && !shared) {
    p.warn([...path, "allowAllTenants"], `has no effect with the organisation tenant ${tenant}`);
  } else if (allowAll) {
    p.warn(
      [...path, "allowAllTenants"],
      `lets people of any tenant log in through "${tenant}", each with an account of their own; list allowedTenants to admit only yours`,
    );
  } else if (shared && allowed.length === 0) {
    p.warn(
      [...path, "tenant"],
      `"${tenant}" takes accounts of every tenant: every login is refused until allowedTenants (or allowAllTenants) is set`,
    );
  }
}

function validateProviders(parent: Record<string, unknown>, path: PathSegment[], p: Problems): string[] {
  const present = PROVIDERS.filter((kind) => read.object(parent, kind));
  for (const kind of present) validateProvider(kind, read.object(parent, kind)!, [...path, kind], p);
  return present;
}

export function validateAuth(auth: Record<string, unknown>, p: Problems): void {
  const path = ["auth"];
  validateProviders(auth, path, p);

  const ids = new Map<string, number>();
  read.list(auth, "connectors").forEach((connector, index) => {
    const at = [...path, "connectors", index];
    if (!connector || typeof connector !== "object") return;
    const c = connector as Record<string, unknown>;
    const id = read.string(c, "id");
    if (id !== undefined) {
      if (!CONNECTOR_ID.test(id)) {
        p.invalid(
          [...at, "id"],
          id,
          "must start with a letter or digit and contain only letters, digits, '.', '_' or '-'",
        );
      }
      if (ids.has(id)) p.duplicate([...at, "id"], id);
      else ids.set(id, index);
    }
    const providers = validateProviders(c, at, p);
    if (providers.length === 0) p.required(at, `exactly one of ${PROVIDERS.join(", ")} is required`);
    if (providers.length > 1) p.forbidden(at, `exactly one provider per connector, found ${providers.join(", ")}`);
  });

  for (const [name, value] of Object.entries(read.object(auth, "customHttpHeaders") ?? {})) {
    const at = [...path, "customHttpHeaders", name];
    if (!isHeaderName(name)) p.invalid(at, name, "must be a valid HTTP header name");
    else if (typeof value === "string" && !isHeaderValue(value)) {
      p.invalid(at, value, "must be a valid HTTP header value (no line breaks or control characters)");
    }
  }

  for (const [pattern, index] of read.strings(auth, "groupsFilters")) {
    const problem = goRegexpProblem(pattern);
    if (problem)
      p.invalid([...path, "groupsFilters", index], pattern, `must be a valid regular expression: ${problem}`);
  }
}
