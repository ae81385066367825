import { hash } from "node:crypto";

/** Longest Kubernetes name (a DNS label) a concatenation may produce. */
const MAX_LENGTH = 63;

/** First `length` hex characters of sha256(text). */
export function shortHash(text: string, length = 10): string {
  return hash("sha256", text, "hex").slice(0, length);
}

/**
 * Joins the parts with `-`. A result longer than 63 characters keeps its first 52 characters, then `-` and the
 * first 10 hex characters of sha256(joined), and every `.-` becomes `-` so the result stays a valid name. The
 * replacement only happens on truncation, as in the upstream implementation; names that are valid Kubernetes names
 * never contain `.-` anyway.
 */
export function safeConcatName(...parts: string[]): string {
  const joined = parts.join("-");
  if (joined.length <= MAX_LENGTH) return joined;
  return `${joined.slice(0, 52)}-${shortHash(joined)}`.replaceAll(".-", "-");
}
