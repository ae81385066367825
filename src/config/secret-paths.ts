// Which values of the platform config are secrets: the fields the schema marks `format: password` (client secrets,
// repository passwords, the secret store token), and, as a fail-safe, any field the schema does not know whose
// name looks like a secret (a misspelt "client_secret" must not be shown either).

import { schemaAt } from "./schema-walk.ts";
import type { PathSegment } from "./yaml-source.ts";

const SECRET_LIKE_NAME = /secret|passw|token|apikey|api_key|privatekey|private_key|credential/i;

export function isSecretPath(path: readonly PathSegment[]): boolean {
  const schema = schemaAt(path);
  if (schema) return schema.format === "password";
  const name = [...path].reverse().find((segment) => typeof segment === "string");
  return typeof name === "string" && SECRET_LIKE_NAME.test(name);
}

/**
 * Whether the value at `path` is a secret or lies inside one: a secret field written with the wrong type (a mapping
 * or a list) is redacted whole, before any validation looks at it.
 */
export function isUnderSecretPath(path: readonly PathSegment[]): boolean {
  for (let length = 1; length <= path.length; length++) {
    if (isSecretPath(path.slice(0, length))) return true;
  }
  return false;
}

/** Comments get the same fail-safe: `# clientSecret: old-value` shows as `# clientSecret: <marker>`. */
export const SECRET_IN_COMMENT =
  /((?:secret|passw\w*|token|apikey|api_key|private_?key|credential)\w*["']?\s*[:=]\s*)(\S.*)$/i;
