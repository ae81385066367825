// Redaction of the platform config for every read: the secrets in spec.raw (spliced out of the YAML text, which
// otherwise stays exactly as written, comments included) and in the parsed status.

import { isPlainObject } from "../apimachinery/types.ts";
import { REDACTED } from "./redaction-marker.ts";
import { isSecretPath, isUnderSecretPath, secretValueInComment } from "./secret-paths.ts";
import { commentRanges, type PathSegment, parseYamlSource, scalarsOf, splice } from "./yaml-source.ts";

function hasValue(value: unknown): boolean {
  return value !== null && value !== undefined && value !== "";
}

/** The replacement for a secret scalar's source: a block scalar keeps its trailing line break. */
function markerFor(source: string): string {
  return source.endsWith("\n") ? `${REDACTED}\n` : REDACTED;
}

/**
 * spec.raw with every secret value replaced by the marker. Text that does not parse as YAML is replaced as a
 * whole (a stored config always parses; this guards audit copies of rejected bodies).
 */
export function redactRawConfig(raw: string): string {
  if (raw.trim() === "") return raw;
  const source = parseYamlSource(raw);
  if (source.document.errors.length > 0) return REDACTED;
  const edits = new Map<number, [number, number, string]>();
  for (const { path, valueNode: target } of scalarsOf(source)) {
    if (!isUnderSecretPath(path)) continue;
    // For an alias this is the anchored node it points to, wherever that is: the alias itself shows no value.
    const value = (target as { value?: unknown }).value;
    if (!hasValue(value) || !target.range) continue;
    const [start, end] = target.range;
    edits.set(start, [start, end, markerFor(raw.slice(start, end))]);
  }
  for (const [start, end] of commentRanges(raw)) {
    const comment = raw.slice(start, end);
    const redacted = redactComment(comment);
    if (redacted !== comment) edits.set(start, [start, end, redacted]);
  }
  return splice(raw, [...edits.values()]);
}

/** A comment with what follows a secret-like name and ":" or "=" replaced by the marker. */
export function redactComment(comment: string): string {
  const value = secretValueInComment(comment);
  return value < 0 ? comment : comment.slice(0, value) + REDACTED;
}

/** A copy of a parsed config with every secret value replaced by the marker. */
export function redactConfigValue<T>(value: T): T {
  // Bounded by MAX_NESTING_DEPTH: configs come from measured bodies or YAML (parseYamlSource).
  const walk = (node: unknown, path: PathSegment[]): unknown => {
    // A secret field of the wrong type (a mapping or list) is redacted whole.
    if ((Array.isArray(node) || isPlainObject(node)) && path.length > 0 && isSecretPath(path)) return REDACTED;
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...path, index]));
    if (isPlainObject(node)) {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[key] = walk(child, [...path, key]);
      return out;
    }
    return hasValue(node) && isSecretPath(path) ? REDACTED : node;
  };
  return walk(value, []) as T;
}
