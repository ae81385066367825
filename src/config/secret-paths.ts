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

/** A secret-like word in a comment (no word boundary: `oldToken: x` counts). */
const SECRET_WORD = /secret|passw|token|apikey|api_key|private_?key|credential/gi;
const WORD_CHARACTER = /\w/;
const WHITESPACE = /\s/;
/** What ends a line for a regular expression's "." (a YAML comment may hold U+2028 and U+2029). */
const LINE_BREAKS = new Set(["\n", "\r", "\u2028", "\u2029"]);

function lastLineBreak(text: string): number {
  let at = text.length - 1;
  while (at >= 0 && !LINE_BREAKS.has(text[at])) at--;
  return at;
}

/**
 * Comments get the same fail-safe: `# clientSecret: old-value` shows as `# clientSecret: <marker>`. Where the value
 * after the first secret-like name and its ":" or "=" starts (past whatever whitespace follows), if the comment has
 * one that runs to its end on one line; -1 otherwise. A scan, linear in the comment's length: the regular expression
 * it replaces, /((?:secret|passw\w*|…)\w*["']?\s*[:=]\s*)(\S.*)$/i, backtracked cubically on a long secret-like
 * word, and comments come from request bodies of up to 3 MiB.
 */
export function secretValueInComment(comment: string): number {
  const lastBreak = lastLineBreak(comment);
  const words = new RegExp(SECRET_WORD);
  for (let found = words.exec(comment); found; found = words.exec(comment)) {
    // Every secret-like word in a run of word characters ends where the run ends: judged once per run.
    let at = found.index + found[0].length;
    while (at < comment.length && WORD_CHARACTER.test(comment[at])) at++;
    words.lastIndex = at;
    if (comment[at] === '"' || comment[at] === "'") at++;
    while (at < comment.length && WHITESPACE.test(comment[at])) at++;
    if (comment[at] !== ":" && comment[at] !== "=") continue;
    at++;
    while (at < comment.length && WHITESPACE.test(comment[at])) at++;
    if (at < comment.length && at > lastBreak) return at;
  }
  return -1;
}
