// Field selectors (k8s.io/apimachinery/pkg/fields): comma separated `field=value`, `field==value`, `field!=value`
// terms. Values may escape `\,`, `\=` and `\\`; the field name is taken literally up to the first operator, spaces
// included, exactly as upstream does. Which fields are supported is the registry's business.

import { allOf } from "../utils/all-of.ts";
import { errors } from "./errors.ts";

export interface FieldRequirement {
  field: string;
  operator: "=" | "!=";
  value: string;
}

/** How to read one field from the objects a selector is compiled for; undefined reads as "". */
export type FieldReader<T> = (object: T) => string | undefined;

export interface FieldSelector {
  readonly requirements: FieldRequirement[];
  /**
   * The selector as a predicate over T. `readerOf` is asked once per requirement, at compile time (it may throw to
   * refuse a field); the predicate then only reads and compares.
   */
  compile<T>(readerOf: (field: string) => FieldReader<T>): (object: T) => boolean;
  /** The selector over a map of field values (compiled on first use). */
  matches(fields: Record<string, string | undefined>): boolean;
  isEmpty(): boolean;
}

function compileRequirements<T>(
  requirements: readonly FieldRequirement[],
  readerOf: (field: string) => FieldReader<T>,
): (object: T) => boolean {
  return allOf(
    requirements.map(({ field, operator, value }) => {
      const read = readerOf(field);
      return operator === "="
        ? (object: T) => (read(object) ?? "") === value
        : (object: T) => (read(object) ?? "") !== value;
    }),
  );
}

/** Reads a field from a map of values, never from its prototype. */
const fromMap =
  (field: string): FieldReader<Record<string, string | undefined>> =>
  (fields) =>
    Object.hasOwn(fields, field) ? fields[field] : undefined;

/** `!=` first, and `==` before `=`, so that no operator character is left on the value. */
const termOperators = ["!=", "==", "="] as const;

/** Splits on commas not escaped by a backslash; the backslashes stay for unescapeValue. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === "\\") inSlash = true;
    else if (c === ",") {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

function splitTerm(term: string): [string, string, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

function unescapeValue(value: string): string {
  if (!/[\\,=]/.test(value)) return value;
  let out = "";
  let inSlash = false;
  for (const c of value) {
    if (inSlash) {
      if (c !== "\\" && c !== "," && c !== "=") {
        throw errors.badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
    } else if (c === "\\") {
      inSlash = true;
    } else if (c === "," || c === "=") {
      // Upstream prints the rune with %v, i.e. its code point number.
      throw errors.badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw errors.badRequest("invalid field selector: invalid escape sequence: \\");
  return out;
}

/** Parses a fieldSelector parameter; the empty string selects everything. Terms come back sorted, as upstream. */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const part of splitTerms(text).sort()) {
    if (part === "") continue;
    const split = splitTerm(part);
    if (!split) throw errors.badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const [field, op, rawValue] = split;
    requirements.push({ field, operator: op === "!=" ? "!=" : "=", value: unescapeValue(rawValue) });
  }
  let overMap: ((fields: Record<string, string | undefined>) => boolean) | undefined;
  return {
    requirements,
    compile: (readerOf) => compileRequirements(requirements, readerOf),
    matches: (fields) => {
      overMap ??= compileRequirements(requirements, fromMap);
      return overMap(fields);
    },
    isEmpty: () => requirements.length === 0,
  };
}
