// Continue tokens of paginated lists, shaped like upstream's (k8s.io/apiserver/pkg/storage/continue.go):
// base64url of {"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key>"}. Here "start" is the full storage key of the
// last item returned, and decoding checks it stays inside the listed prefix: a token is client input, so a forged
// one must not widen the list to other resources or namespaces.

import { errors, type StatusError } from "./errors.ts";
import { isPlainObject } from "./types.ts";

export interface ContinuePosition {
  revision: number;
  startAfter: string;
}

const TOKEN_VERSION = "meta.k8s.io/v1";
/** Far beyond any real key plus JSON framing; stops decoding of absurd inputs early. */
const MAX_TOKEN_LENGTH = 16 * 1024;

export function encodeContinueToken(position: ContinuePosition): string {
  const body = JSON.stringify({ v: TOKEN_VERSION, rv: position.revision, start: position.startAfter });
  return Buffer.from(body, "utf8").toString("base64url");
}

function invalid(why: string): StatusError {
  return errors.badRequest(`continue key is not valid: ${why}`);
}

/** Segments after the prefix must be non-empty and not "." or "..": no `//`, `/./` or `/../` tricks. */
function traversalProblem(rest: string): string | undefined {
  if (rest.length === 0) return "encoded start key empty";
  for (const segment of rest.split("/")) {
    if (segment === "") return "start key contains an empty path segment";
    if (segment === "." || segment === "..") return "start key contains a relative path segment";
  }
  if (rest.includes("\0")) return "start key contains a NUL character";
  return undefined;
}

/** Decodes a token for a list under `keyPrefix`; anything malformed or foreign is 400 BadRequest. */
export function decodeContinueToken(token: string, keyPrefix: string): ContinuePosition {
  if (typeof token !== "string" || token.length === 0) throw invalid("empty token");
  if (token.length > MAX_TOKEN_LENGTH) throw invalid("token too long");
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw invalid("illegal base64 data");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalid("not a JSON document");
  }
  if (!isPlainObject(parsed)) throw invalid("not a JSON object");
  const version = Object.hasOwn(parsed, "v") ? parsed.v : undefined;
  if (version !== TOKEN_VERSION) {
    throw invalid(`server does not recognize this encoded version ${JSON.stringify(String(version ?? ""))}`);
  }
  const revision = Object.hasOwn(parsed, "rv") ? parsed.rv : undefined;
  if (typeof revision !== "number" || !Number.isSafeInteger(revision) || revision <= 0) {
    throw invalid(`incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  }
  const start = Object.hasOwn(parsed, "start") ? parsed.start : undefined;
  if (typeof start !== "string" || start.length === 0)
    throw invalid(`encoded start key empty (version ${TOKEN_VERSION})`);
  let rest = start.startsWith(keyPrefix) ? start.slice(keyPrefix.length) : undefined;
  // A prefix without a trailing slash must still end at a segment boundary.
  if (rest !== undefined && !keyPrefix.endsWith("/")) rest = rest.startsWith("/") ? rest.slice(1) : undefined;
  if (rest === undefined) throw invalid("start key is outside the listed resource");
  const problem = traversalProblem(rest);
  if (problem) throw invalid(problem);
  return { revision, startAfter: start };
}
