// The two generations that end a user's credentials:
//   - spec.tokenGeneration (the specification's field): raising it invalidates every token issued to the user before
//     (access keys of every type, direct cluster endpoint tokens, the OpenID provider's grants and refresh tokens,
//     console sessions). It may only be raised: lowering it would bring revoked tokens back.
//   - the session generation, the server-owned annotation management.platform.sh/session-generation: raised by the
//     platform when the user's sessions end for good (the user is disabled; a password change raises it through the
//     password subresource). It ends Login keys (password and SSO logins, console sessions) and the OpenID
//     provider's refresh tokens and grants issued before, while API keys and endpoint tokens only pause while the
//     user is disabled. A write keeps the stored value or raises it (any writer of the user may end its sessions);
//     one that lowers or drops it keeps the stored value, so `kubectl apply` of a manifest without it changes
//     nothing.

import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { SESSION_GENERATION_ANNOTATION } from "./ownedaccesskey-secrets.ts";
import type { User } from "./user.ts";

export { SESSION_GENERATION_ANNOTATION };

/** A user's session generation (0 when it never ended its sessions). */
export function sessionGeneration(user: User): number {
  const number = Number(user.metadata.annotations?.[SESSION_GENERATION_ANNOTATION] ?? 0);
  return Number.isSafeInteger(number) && number > 0 ? number : 0;
}

function setSessionGeneration(user: User, generation: number): void {
  const annotations = { ...(user.metadata.annotations ?? {}) };
  if (generation > 0) annotations[SESSION_GENERATION_ANNOTATION] = String(generation);
  else delete annotations[SESSION_GENERATION_ANNOTATION];
  user.metadata.annotations = annotations;
  if (Object.keys(annotations).length === 0) delete user.metadata.annotations;
}

/** A new user has had no sessions: it starts at 0 whatever the create says. */
export function startSessionGeneration(user: User): void {
  setSessionGeneration(user, 0);
}

/**
 * An update keeps or raises the session generation, and disabling the user raises it by one. An update that leaves
 * spec.tokenGeneration out keeps the stored one (as a Service keeps its clusterIP).
 */
export function carryGenerations(user: User, old: User): void {
  if (user.spec && user.spec.tokenGeneration === undefined && old.spec?.tokenGeneration !== undefined) {
    user.spec.tokenGeneration = old.spec.tokenGeneration;
  }
  const stored = sessionGeneration(old);
  let next = Math.max(stored, sessionGeneration(user));
  if (old.spec?.disabled !== true && user.spec?.disabled === true) next = Math.max(next, stored + 1);
  setSessionGeneration(user, next);
}

/** spec.tokenGeneration may only be raised. */
export function tokenGenerationErrors(user: User, old: User): FieldError[] {
  const before = old.spec?.tokenGeneration ?? 0;
  const after = user.spec?.tokenGeneration ?? 0;
  if (typeof after !== "number" || after >= before) return [];
  return [
    fieldError.invalid(
      "spec.tokenGeneration",
      after,
      `may only be raised (it is ${before}): lowering it would bring back the tokens raising it revoked`,
    ),
  ];
}
