// Writing back what a read returned: every secret the read showed as the marker gets its stored value again, so
// `kubectl edit` (GET, change, PUT) or applying an exported config keeps the secrets. Items of keyed lists are
// matched by key (a connector by id, a repository by name), so reordering a list keeps each item's secret. A kept
// secret goes where it went before: changing a field that decides where (secret-destinations.ts) while sending the
// marker is refused, naming the field, until the secret itself is written again.

import type { FieldError } from "../apimachinery/field-errors.ts";
import { isPlainObject } from "../apimachinery/types.ts";
import { redactComment } from "./redact.ts";
import { REDACTED } from "./redaction-marker.ts";
import { fieldPath } from "./schema-walk.ts";
import { secretDestination } from "./secret-destinations.ts";
import { isSecretPath } from "./secret-paths.ts";
import {
  commentRanges,
  nodeAt,
  type PathSegment,
  parseYamlSource,
  scalarsOf,
  splice,
  type YamlSource,
} from "./yaml-source.ts";

/** Lists whose items are identified by one of these fields (first one the item has), not by position. */
const LIST_KEYS: Record<string, string[]> = {
  "auth.connectors": ["id"],
  "oidc.clients": ["clientId", "name"],
  "apps.repositories": ["name", "url"],
};

export interface RestoredRaw {
  raw: string;
  errors: FieldError[];
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let node = root;
  for (const segment of path) {
    if (typeof segment === "number") node = Array.isArray(node) ? node[segment] : undefined;
    else node = isPlainObject(node) ? node[segment] : undefined;
  }
  return node;
}

/** The stored item's path for a path in the new text, or undefined when the stored config has no such item. */
function storedPath(path: readonly PathSegment[], next: unknown, stored: unknown): PathSegment[] | undefined {
  const out: PathSegment[] = [];
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const keys = typeof segment === "number" ? LIST_KEYS[path.slice(0, i).join(".")] : undefined;
    if (typeof segment === "number" && keys) {
      const item = valueAt(next, path.slice(0, i + 1));
      const key = keys.find((k) => isPlainObject(item) && typeof item[k] === "string" && item[k] !== "");
      if (key !== undefined && isPlainObject(item)) {
        const list = valueAt(stored, out);
        const index = Array.isArray(list) ? list.findIndex((o) => isPlainObject(o) && o[key] === item[key]) : -1;
        if (index === -1) return undefined;
        out.push(index);
        continue;
      }
    }
    out.push(segment);
  }
  return out;
}

/** Unset, empty and false all mean "not set" (a missing insecureCa is insecureCa: false). */
const setting = (value: unknown) =>
  value === undefined || value === null || value === "" || value === false ? undefined : JSON.stringify(value);

/** The destination fields (full paths in the new text) whose value differs from the stored config's. */
function movedDestinations(
  path: readonly PathSegment[],
  from: readonly PathSegment[],
  next: unknown,
  stored: unknown,
): PathSegment[][] {
  const destination = secretDestination(path);
  if (!destination) return [];
  const storedBlock = from.slice(0, destination.block.length);
  return destination.fields
    .filter(
      (field) =>
        setting(valueAt(next, [...destination.block, field])) !== setting(valueAt(stored, [...storedBlock, field])),
    )
    .map((field) => [...destination.block, field]);
}

function redirectedSecret(
  prefix: string,
  secret: readonly PathSegment[],
  field: PathSegment[],
  value: unknown,
): FieldError {
  const name = String(field.at(-1));
  return {
    type: "FieldValueInvalid",
    field: fieldPath(prefix, field),
    badValueText: typeof value === "string" || typeof value === "boolean" ? JSON.stringify(value) : "(changed)",
    detail: `changed while ${fieldPath(prefix, secret)} is the redaction marker: a stored secret is only sent where it was sent before; re-enter the secret to change ${name}`,
  };
}

/** The stored secret: its value and its text as written (block scalars and quoting included). */
function storedSecret(stored: YamlSource, path: PathSegment[]): { value: unknown; written: string } | undefined {
  const node = nodeAt(stored, path);
  const value = (node as { value?: unknown } | undefined)?.value;
  if (!node?.range || value === undefined || value === null || value === REDACTED) return undefined;
  return { value, written: stored.text.slice(node.range[0], node.range[1]) };
}

interface Replacement {
  path: PathSegment[];
  start: number;
  end: number;
  value: unknown;
  written: string;
}

/** Splices the stored texts as written; falls back to double-quoted scalars if that reads back differently. */
function spliceSecrets(raw: string, replacements: Replacement[]): string {
  const verbatim = splice(
    raw,
    replacements.map(({ start, end, written }) => {
      const text = written.endsWith("\n") && raw[end] === "\n" ? written.slice(0, -1) : written;
      return [start, end, text];
    }),
  );
  const check = parseYamlSource(verbatim);
  const same =
    check.document.errors.length === 0 &&
    replacements.every(({ path, value }) => (nodeAt(check, path) as { value?: unknown } | undefined)?.value === value);
  if (same) return verbatim;
  return splice(
    raw,
    replacements.map(({ start, end, value }) => [start, end, JSON.stringify(String(value))]),
  );
}

/** Comments the read redacted get their stored text back when they are otherwise unchanged. */
function restoreComments(raw: string, storedRaw: string): [number, number, string][] {
  const stored = new Map<string, string>();
  for (const [start, end] of commentRanges(storedRaw)) {
    const comment = storedRaw.slice(start, end);
    stored.set(redactComment(comment), comment);
  }
  const edits: [number, number, string][] = [];
  for (const [start, end] of commentRanges(raw)) {
    const original = stored.get(raw.slice(start, end));
    if (original !== undefined && raw.slice(start, end).includes(REDACTED)) edits.push([start, end, original]);
  }
  return edits;
}

/**
 * Puts the stored secrets back where `raw` has the marker at a secret field. `storedRaw` is the stored spec.raw
 * (with its secrets); a marker with nothing stored behind it is an error.
 */
export function restoreSecrets(raw: string, storedRaw: string | undefined, prefix = "spec.raw"): RestoredRaw {
  if (!raw.includes(REDACTED)) return { raw, errors: [] };
  const source = parseYamlSource(raw);
  if (source.document.errors.length > 0) return { raw, errors: [] }; // reported by the parser
  const stored = parseYamlSource(storedRaw ?? "");
  const nextValue = source.document.toJS({ maxAliasCount: 100 });
  const storedValue = stored.document.errors.length ? undefined : stored.document.toJS({ maxAliasCount: 100 });
  const replacements: Replacement[] = [];
  const errors: FieldError[] = [];
  for (const { path, node } of scalarsOf(source)) {
    if ((node as { value?: unknown }).value !== REDACTED || !node.range || !isSecretPath(path)) continue;
    const from = storedPath(path, nextValue, storedValue);
    const secret = from && storedValue !== undefined ? storedSecret(stored, from) : undefined;
    if (secret === undefined) {
      errors.push({
        type: "FieldValueInvalid",
        field: fieldPath(prefix, path),
        badValueText: JSON.stringify(REDACTED),
        detail: "the redaction marker stands for a stored secret, but none is stored here: write the secret itself",
      });
      continue;
    }
    const moved = movedDestinations(path, from ?? [], nextValue, storedValue);
    if (moved.length > 0) {
      errors.push(...moved.map((field) => redirectedSecret(prefix, path, field, valueAt(nextValue, field))));
      continue;
    }
    replacements.push({ path, start: node.range[0], end: node.range[1], ...secret });
  }
  let restored = replacements.length ? spliceSecrets(raw, replacements) : raw;
  if (storedRaw) restored = splice(restored, restoreComments(restored, storedRaw));
  return { raw: restored, errors };
}
