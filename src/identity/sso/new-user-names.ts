// Names for the users and teams single sign-on creates. A new user's object name and username never reuse an
// existing user's name or username: the provider's preferred name is only a suggestion (anyone can call themselves
// "admin" at their own provider), so a taken one gets a numeric suffix. Usernames matter beyond display: password
// login and the virtual clusters' RBAC know a user by it.

import { createHash } from "node:crypto";
import { trimChar, trimEndChar } from "../../utils/trim-char.ts";

const MAX_NAME = 63;
/** How many suffixed candidates a login tries before giving up (each is checked in memory first). */
export const MAX_NAME_CANDIDATES = 100;
/** A provider's suggestion is cut to this many characters (it may send anything). */
const MAX_SUGGESTION = 128;

/** A DNS-1123 name for a username or group (lower case, [a-z0-9-]); a hash suffix when the text had to change. */
export function objectNameFor(text: string, fallback: string): string {
  const cleaned = trimChar(text.toLowerCase().replace(/[^a-z0-9-]+/g, "-"), "-").replace(/-{2,}/g, "-");
  const base = cleaned || fallback;
  if (base === text && base.length <= MAX_NAME) return base;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 8);
  return `${trimEndChar(base.slice(0, MAX_NAME - 9), "-")}-${hash}`;
}

export interface NameCandidate {
  /** The object name (metadata.name). */
  name: string;
  /** spec.username. */
  username: string;
}

/**
 * The candidates for a new user whose provider suggests `preferred`, in order: the suggestion itself, then
 * `<suggestion>-2`, `-3`, ... Any whose name or username equals (ignoring case) a name or username in `taken` is
 * skipped.
 */
export function* freeUserNames(preferred: string, taken: ReadonlySet<string>): Generator<NameCandidate> {
  const base = preferred.trim().slice(0, MAX_SUGGESTION) || "user";
  const free = (text: string) => !taken.has(text.toLowerCase());
  for (let attempt = 1; attempt <= MAX_NAME_CANDIDATES; attempt++) {
    const username = attempt === 1 ? base : `${base}-${attempt}`;
    const name = objectNameFor(username, "user");
    if (free(username) && free(name)) yield { name, username };
  }
}
