// The YAML of spec.raw as a parsed document with positions: config paths to nodes and lines, scalars with their
// paths, and comment positions. Redaction and secret restoring splice the source text at these positions, so
// everything else in the text stays exactly as written.

import { Document, isAlias, isMap, isScalar, isSeq, Lexer, LineCounter, type Node, YAMLParseError } from "yaml";
import { parseYamlDocument } from "../apimachinery/parse-yaml-document.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";

export type PathSegment = string | number;

export interface YamlSource {
  text: string;
  document: Document;
  lines: LineCounter;
}

/**
 * Parser options shared by every reading of spec.raw: YAML 1.2 core schema, unique keys, capped aliases. Text nested
 * deeper than MAX_NESTING_DEPTH gives an empty document whose error says so (every reader checks the errors), so the
 * walks below are bounded.
 */
export function parseYamlSource(text: string): YamlSource {
  const lines = new LineCounter();
  const options = { schema: "core", uniqueKeys: true, prettyErrors: true, lineCounter: lines } as const;
  const parsed = parseYamlDocument(text, options);
  if (parsed.document) return { text, document: parsed.document, lines };
  lines.addNewLine(0);
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines.addNewLine(i + 1);
  const at = parsed.tooDeepAt;
  const error = new YAMLParseError(
    [at, at + 1],
    "RESOURCE_EXHAUSTION",
    `nested too deeply: mappings and sequences may nest at most ${MAX_NESTING_DEPTH} levels`,
  );
  error.linePos = [lines.linePos(at), lines.linePos(at + 1)];
  const document = new Document(null, options) as Document.Parsed;
  document.errors.push(error);
  return { text, document, lines };
}

export interface ScalarAt {
  path: PathSegment[];
  node: Node;
  /** The node the value comes from (the anchored node for an alias). */
  valueNode: Node;
}

/** Every scalar (and alias) below the document root, with its config path. Keys that are not scalars are skipped. */
export function scalarsOf(source: YamlSource): ScalarAt[] {
  const out: ScalarAt[] = [];
  // Bounded by MAX_NESTING_DEPTH (parseYamlSource); an alias is not followed.
  const walk = (node: unknown, path: PathSegment[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        walk(pair.value, [...path, String(pair.key.value)]);
      }
    } else if (isSeq(node)) {
      for (const [index, item] of node.items.entries()) walk(item, [...path, index]);
    } else if (isScalar(node)) {
      out.push({ path, node, valueNode: node });
    } else if (isAlias(node)) {
      const target = node.resolve(source.document);
      if (target) out.push({ path, node, valueNode: target });
    }
  };
  walk(source.document.contents, []);
  return out;
}

/**
 * The 1-based line of the first anchor (`&name`) or alias (`*name`) in the document, or undefined. The platform
 * config refuses them: an alias can copy a secret into a field every reader sees.
 */
export function firstAnchorOrAlias(source: YamlSource): number | undefined {
  let found: number | undefined;
  const lineOf = (node: Node) => (node.range ? source.lines.linePos(node.range[0]).line : 1);
  // Bounded by MAX_NESTING_DEPTH (parseYamlSource).
  const walk = (node: unknown): void => {
    if (found !== undefined || !node || typeof node !== "object") return;
    if (isAlias(node) || (node as { anchor?: string }).anchor) {
      found = lineOf(node as Node);
      return;
    }
    if (isMap(node)) {
      for (const pair of node.items) {
        walk(pair.key);
        walk(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) walk(item);
    }
  };
  walk(source.document.contents);
  return found;
}

/** The node at a config path, or undefined. */
export function nodeAt(source: YamlSource, path: readonly PathSegment[]): Node | undefined {
  let node: unknown = source.document.contents;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(source.document);
    if (typeof segment === "number" && isSeq(node)) node = node.items[segment];
    else if (typeof segment === "string" && isMap(node)) {
      node = node.items.find((pair) => isScalar(pair.key) && String(pair.key.value) === segment)?.value;
    } else return undefined;
  }
  return (node ?? undefined) as Node | undefined;
}

/** 1-based line of the node at a path (or of its nearest existing ancestor). */
export function lineAt(source: YamlSource, path: readonly PathSegment[]): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = nodeAt(source, path.slice(0, length));
    if (node?.range) return source.lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/** [start, end) of every comment in the text (the text from "#" to the end of its line). */
export function commentRanges(text: string): [number, number][] {
  const out: [number, number][] = [];
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    // Zero-width control tokens of the lexer (document start, scalar marker, flow error end).
    if (token === "\x02" || token === "\x1f" || token === "\x18") continue;
    if (token.startsWith("#")) out.push([offset, offset + token.length]);
    offset += token.length;
  }
  return out;
}

/** Applies text replacements given as [start, end, text]; ranges must not overlap. */
export function splice(text: string, edits: [number, number, string][]): string {
  let out = text;
  for (const [start, end, replacement] of [...edits].sort((a, b) => b[0] - a[0])) {
    out = out.slice(0, start) + replacement + out.slice(end);
  }
  return out;
}
