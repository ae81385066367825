// yaml's parseDocument within the nesting bound. yaml builds its tokens without recursion, but composes them into a
// document, and that into JavaScript values, with one call per level (composing runs out of stack near 760 levels).
// So the nesting is measured on the tokens before anything is composed, and again on the composed document, where
// an alias can put an anchored node deeper than the text shows, or inside itself (a cycle). A document nested more
// than MAX_NESTING_DEPTH levels is never composed or converted.

import {
  CST,
  type Document,
  type DocumentOptions,
  isAlias,
  isMap,
  isPair,
  isSeq,
  type ParseOptions,
  Parser,
  parseDocument,
  type SchemaOptions,
} from "yaml";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";

/** The document, or where (a text offset) its nesting passes MAX_NESTING_DEPTH. */
export type BoundedYamlDocument =
  | { document: Document.Parsed; tooDeepAt?: undefined }
  | { document?: undefined; tooDeepAt: number };

/** The offset of the first collection token nested past `limit` levels, or -1. */
function tokensNestingBeyond(text: string, limit: number): number {
  const stack: [CST.Token, number][] = [];
  for (const token of new Parser().parse(text)) {
    if (token.type === "document" && token.value) stack.push([token.value, 0]);
    while (stack.length > 0) {
      const [node, depth] = stack.pop() as [CST.Token, number];
      if (!CST.isCollection(node)) continue;
      if (depth + 1 > limit) return node.offset;
      for (const item of node.items) {
        if (item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return -1;
}

/** A node's children with the levels each adds: a pair inside a sequence becomes a map of its own. */
function childrenOf(node: unknown, document: Document): [unknown, number][] {
  if (isAlias(node)) {
    const target = node.resolve(document);
    return target ? [[target, 0]] : [];
  }
  const out: [unknown, number][] = [];
  if (isMap(node)) {
    for (const pair of node.items) out.push([pair.key, 1], [pair.value, 1]);
  } else if (isSeq(node)) {
    for (const item of node.items) {
      if (isPair(item)) out.push([item.key, 2], [item.value, 2]);
      else out.push([item, 1]);
    }
  }
  return out;
}

/** Whether the document's value, aliases followed, nests more than `limit` levels (a cycle always does). */
function documentNestingBeyond(document: Document, limit: number): boolean {
  const heights = new Map<unknown, number>();
  // Nodes whose children are being measured: exactly the path from the root to the top of the stack.
  const open = new Set<unknown>();
  const stack: unknown[] = [document.contents];
  while (stack.length > 0) {
    const node = stack[stack.length - 1];
    if (heights.has(node)) {
      stack.pop();
      continue;
    }
    const children = childrenOf(node, document);
    if (!open.has(node)) {
      open.add(node);
      for (const [child] of children) {
        if (open.has(child)) return true;
        if (!heights.has(child)) stack.push(child);
      }
      continue;
    }
    let height = 0;
    for (const [child, levels] of children) height = Math.max(height, levels + (heights.get(child) ?? 0));
    if (height > limit) return true;
    heights.set(node, height);
    open.delete(node);
    stack.pop();
  }
  return false;
}

/** parseDocument(text, options), unless the text or its aliases nest deeper than MAX_NESTING_DEPTH. */
export function parseYamlDocument(
  text: string,
  options: ParseOptions & DocumentOptions & SchemaOptions,
): BoundedYamlDocument {
  const at = tokensNestingBeyond(text, MAX_NESTING_DEPTH);
  if (at !== -1) return { tooDeepAt: at };
  const document = parseDocument(text, options);
  if (document.errors.length === 0 && documentNestingBeyond(document, MAX_NESTING_DEPTH)) {
    return { tooDeepAt: document.contents?.range[0] ?? 0 };
  }
  return { document };
}
