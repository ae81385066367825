// Keeping key material out of every read. The stored `spec.key` is "sha256:<hex digest>"; reads drop it (the create
// response alone carries the plain key), and OIDC tokens and connector data never leave the server either.

import type { KubeObject } from "../../../apimachinery/types.ts";
import { jsonNestingBeyond } from "../../../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../../../utils/max-nesting-depth.ts";
import type { OwnedAccessKey, OwnedAccessKeySpec } from "./ownedaccesskey-schema.ts";

export const DIGEST_PREFIX = "sha256:";
/**
 * Server-owned annotations: who the key was issued to (uid) and, for a user's key, the user's token generation and
 * session generation then (a key issued before either was raised no longer authenticates).
 */
export const USER_UID_ANNOTATION = "management.platform.sh/user-uid";
export const TEAM_UID_ANNOTATION = "management.platform.sh/team-uid";
export const TOKEN_GENERATION_ANNOTATION = "management.platform.sh/token-generation";
/** On a key: the user's session generation when it was issued; on a User: its session generation now. */
export const SESSION_GENERATION_ANNOTATION = "management.platform.sh/session-generation";
export const SERVER_ANNOTATIONS = [
  USER_UID_ANNOTATION,
  TEAM_UID_ANNOTATION,
  TOKEN_GENERATION_ANNOTATION,
  SESSION_GENERATION_ANNOTATION,
] as const;
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** The hex digest stored for a key, if the stored value has the digest form. */
export function storedDigest(key: OwnedAccessKey): string | undefined {
  const value = key.spec?.key;
  return typeof value === "string" && value.startsWith(DIGEST_PREFIX) ? value.slice(DIGEST_PREFIX.length) : undefined;
}

/** Fields holding secrets other than the key itself (dropped from reads, kept across updates that omit them). */
function stripOtherSecrets(spec: OwnedAccessKeySpec): void {
  if (spec.identity && "connectorData" in spec.identity) {
    spec.identity = { ...spec.identity };
    delete spec.identity.connectorData;
  }
  if (spec.oidcLogin) {
    const { idToken: _i, accessToken: _a, refreshToken: _r, ...rest } = spec.oidcLogin;
    spec.oidcLogin = rest;
  }
}

/** A copy for a read: no digest, no tokens; `revealed` (the plain key) only in its create response. */
export function presentAccessKey(key: OwnedAccessKey, revealed?: string): OwnedAccessKey {
  if (!key.spec) return key;
  const spec = { ...key.spec };
  if (revealed) spec.key = revealed;
  else delete spec.key;
  stripOtherSecrets(spec);
  return { ...key, spec };
}

/** Restores secrets a client could not have sent back (reads never show them). */
export function keepStoredSecrets(next: OwnedAccessKeySpec, old: OwnedAccessKeySpec | undefined): void {
  const connectorData = old?.identity?.connectorData;
  if (connectorData !== undefined && next.identity && next.identity.connectorData === undefined) {
    next.identity.connectorData = connectorData;
  }
  if (old?.oidcLogin && next.oidcLogin) {
    for (const field of ["idToken", "accessToken", "refreshToken"] as const) {
      if (old.oidcLogin[field] !== undefined && !next.oidcLogin[field]) next.oidcLogin[field] = old.oidcLogin[field];
    }
  }
}

/**
 * kubectl's client-side apply copies the whole manifest, key included, into an annotation: drop the key there.
 * An annotation that is not JSON is left alone (the scan below then refuses a key inside it).
 */
export function scrubLastApplied(object: KubeObject): void {
  const annotations = object.metadata.annotations;
  const text = annotations?.[LAST_APPLIED];
  if (!annotations || typeof text !== "string") return;
  // Nested past the bound: left as not JSON (the body's bound did not measure this string).
  if (jsonNestingBeyond(text, MAX_NESTING_DEPTH) !== -1) return;
  try {
    const applied = JSON.parse(text) as { spec?: OwnedAccessKeySpec };
    if (!applied?.spec || typeof applied.spec !== "object") return;
    delete applied.spec.key;
    stripOtherSecrets(applied.spec);
    annotations[LAST_APPLIED] = `${JSON.stringify(applied)}\n`;
  } catch {
    // Not JSON: nothing to scrub.
  }
}

/** Whether any string in `value` other than spec.key contains one of `needles` (copies of key material). */
export function containsMaterial(object: KubeObject, needles: readonly string[]): boolean {
  const present = needles.filter((needle) => needle.length > 0);
  if (present.length === 0) return false;
  // Bounded by MAX_NESTING_DEPTH: the object comes from a measured body.
  const visit = (value: unknown, isKeyField: boolean): boolean => {
    if (typeof value === "string") return !isKeyField && present.some((needle) => value.includes(needle));
    if (Array.isArray(value)) return value.some((item) => visit(item, false));
    if (value && typeof value === "object") {
      return Object.entries(value).some(
        ([field, item]) => present.some((n) => field.includes(n)) || visit(item, false),
      );
    }
    return false;
  };
  const { spec, ...rest } = object as OwnedAccessKey;
  if (visit(rest, false)) return true;
  if (!spec) return false;
  return Object.entries(spec).some(([field, item]) => visit(item, field === "key"));
}
