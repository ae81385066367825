// Serialization of request and response objects for the audit log with every credential replaced by the
// redaction marker: access keys, passwords, tokens, client secrets, kubeconfigs, private keys; the platform
// config's spec.raw (its secrets spliced out); the same inside kubectl's last-applied annotation and inside JSON
// patch operations that set such fields. One JSON.stringify pass with a replacer, no copy of the object.

import { LAST_APPLIED } from "../config/last-applied.ts";
import { redactRawConfig } from "../config/redact.ts";
import { REDACTED } from "../config/redaction-marker.ts";
import { jsonNestingBeyond } from "../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";

const SECRET_KEY =
  /^(key|accesskey|apikey|secret|token|password|passwd|kubeconfig|connectordata|privatekey|client-key-data)$|(secret|token|password|privatekey)$/i;

/** Whether a field of this name holds a credential (its string value is never logged). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

function redactString(key: string, value: string): string {
  if (value === "") return value;
  if (key === "raw") return redactRawConfig(value);
  if (isSecretKey(key)) return REDACTED;
  if (key === LAST_APPLIED) {
    // A string inside the body, so the body's nesting bound did not measure it; this recursion does walk it.
    if (jsonNestingBeyond(value, MAX_NESTING_DEPTH) !== -1) return REDACTED;
    try {
      return auditJson(JSON.parse(value));
    } catch {
      return REDACTED;
    }
  }
  return value;
}

function replacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value !== "string") return value;
  // A JSON patch operation: {op, path: "/spec/key", value: "..."} sets the field its path names.
  if (key === "value" && this && typeof this === "object" && "op" in this && "path" in this) {
    const path = (this as { path: unknown }).path;
    if (typeof path === "string") return redactString(path.slice(path.lastIndexOf("/") + 1), value);
  }
  return redactString(key, value);
}

/**
 * Whether redaction could change this compact JSON text: it has a key auditJson redacts or rewrites (a secret name,
 * `raw`, the last-applied annotation, a JSON patch's `op`) or a backslash (an escaped key is not read here). False
 * means auditJson(JSON.parse(json)) === json, so the text can be logged as it is.
 */
export function mayHoldSecrets(json: string): boolean {
  return json.includes("\\") || SECRET_KEY_IN_TEXT.test(json);
}

/**
 * A key ending in a secret word, or one of the names redacted exactly. The endings are matched without their key's
 * opening quote: in JSON without backslashes a quote followed by a colon closes a key, so the match is that key's
 * end. Matching from each opening quote instead (`"[^"]*(?:secret|…)"`) costs twice as much per answer.
 */
const SECRET_KEY_IN_TEXT =
  /(?:secret|token|password|privatekey)"\s*:|"(?:key|accesskey|apikey|passwd|kubeconfig|connectordata|client-key-data|raw|op|kubectl\.kubernetes\.io\/last-applied-configuration)"\s*:/i;

/** JSON of `value` with credentials redacted. */
export function auditJson(value: unknown): string {
  return JSON.stringify(value, replacer) ?? "null";
}

/** Query parameters of the login and OpenID provider endpoints that carry credentials or assertions. */
const LOGIN_SECRET_PARAMETERS = [
  "code",
  "state",
  "cli_state",
  "SAMLResponse",
  "RelayState",
  "id_token",
  "access_token",
  "id_token_hint",
  "refresh_token",
  "token",
  "client_secret",
  "code_verifier",
];

/**
 * The request URI as audited: on the login endpoints (/auth/...) and the OpenID provider's (/oidc/...), also under
 * a mount prefix, the values of codes, states, tokens and assertions are replaced, since the URI is logged at every
 * level.
 */
export function auditRequestUri(uri: string): string {
  const query = uri.indexOf("?");
  if (query < 0 || !/(^|\/)(auth|oidc)\//.test(uri.slice(0, query))) return uri;
  const params = new URLSearchParams(uri.slice(query + 1));
  let changed = false;
  for (const name of LOGIN_SECRET_PARAMETERS) {
    if (params.has(name)) {
      params.set(name, "<redacted>");
      changed = true;
    }
  }
  return changed ? `${uri.slice(0, query)}?${params.toString()}` : uri;
}
