// An immutable set of field paths, the structure behind every managedFields entry (upstream fieldpath.Set).
// A node holds its members (paths that end here) and its children (subsets below a path element). A path can be
// both a member and a parent: a list item is owned as a whole (".") and through its fields.

import { pathElement } from "./path-element.ts";

/** A field path: path elements in FieldsV1 key form, e.g. ["f:spec", "f:items", 'k:{"name":"a"}']. */
export type FieldPath = readonly string[];

interface MutableNode {
  members: Set<string>;
  children: Map<string, MutableNode>;
}

function sorted(elements: Iterable<string>): string[] {
  return [...elements].sort(pathElement.compare);
}

/**
 * The operations below recurse once per level. Sets mirror objects (and FieldsV1 sent by clients), whose nesting
 * MAX_NESTING_DEPTH bounds when bodies are decoded and patches applied, so the recursion stays shallow.
 */
export class FieldSet {
  static readonly empty: FieldSet = new FieldSet(new Set(), new Map());

  readonly #members: ReadonlySet<string>;
  readonly #children: ReadonlyMap<string, FieldSet>;
  #sortedMembers: string[] | undefined;
  #sortedChildren: string[] | undefined;

  private constructor(members: ReadonlySet<string>, children: ReadonlyMap<string, FieldSet>) {
    this.#members = members;
    this.#children = children;
  }

  /** A set from its members and children at this level; empty children are dropped. */
  static of(members: Iterable<string>, children: Iterable<readonly [string, FieldSet]> = []): FieldSet {
    const kept = new Map<string, FieldSet>();
    for (const [element, child] of children) {
      if (!child.isEmpty()) kept.set(element, kept.get(element)?.union(child) ?? child);
    }
    const memberSet = new Set(members);
    if (memberSet.size === 0 && kept.size === 0) return FieldSet.empty;
    return new FieldSet(memberSet, kept);
  }

  static fromPaths(paths: Iterable<FieldPath>): FieldSet {
    const root: MutableNode = { members: new Set(), children: new Map() };
    for (const path of paths) {
      if (path.length === 0) continue;
      let node = root;
      for (const element of path.slice(0, -1)) {
        let next = node.children.get(element);
        if (!next) {
          next = { members: new Set(), children: new Map() };
          node.children.set(element, next);
        }
        node = next;
      }
      node.members.add(path[path.length - 1]);
    }
    const freeze = (node: MutableNode): FieldSet =>
      FieldSet.of(
        node.members,
        [...node.children].map(([element, child]) => [element, freeze(child)] as const),
      );
    return freeze(root);
  }

  isEmpty(): boolean {
    return this.#members.size === 0 && this.#children.size === 0;
  }

  /** Whether `path` is a member (not merely the parent of members). */
  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let node: FieldSet = this;
    for (const element of path.slice(0, -1)) {
      const next = node.#children.get(element);
      if (!next) return false;
      node = next;
    }
    return node.#members.has(path[path.length - 1]);
  }

  /** The subset below one path element, without that element (upstream WithPrefix). */
  child(element: string): FieldSet {
    return this.#children.get(element) ?? FieldSet.empty;
  }

  /** Members at this level, in upstream order. */
  memberElements(): readonly string[] {
    this.#sortedMembers ??= sorted(this.#members);
    return this.#sortedMembers;
  }

  /** Elements that have children at this level, in upstream order. */
  childElements(): readonly string[] {
    this.#sortedChildren ??= sorted(this.#children.keys());
    return this.#sortedChildren;
  }

  union(other: FieldSet): FieldSet {
    if (other.isEmpty()) return this;
    if (this.isEmpty()) return other;
    const children = new Map(this.#children);
    for (const [element, child] of other.#children) {
      children.set(element, children.get(element)?.union(child) ?? child);
    }
    return new FieldSet(new Set([...this.#members, ...other.#members]), children);
  }

  intersection(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return FieldSet.empty;
    const members = [...this.#members].filter((element) => other.#members.has(element));
    const children: [string, FieldSet][] = [];
    for (const [element, child] of this.#children) {
      const theirs = other.#children.get(element);
      if (theirs) children.push([element, child.intersection(theirs)]);
    }
    return FieldSet.of(members, children);
  }

  /** Members of this set not in `other`; a parent minus its child keeps the parent, and vice versa. */
  difference(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return this;
    const members = [...this.#members].filter((element) => !other.#members.has(element));
    const children: [string, FieldSet][] = [];
    for (const [element, child] of this.#children) {
      const theirs = other.#children.get(element);
      children.push([element, theirs ? child.difference(theirs) : child]);
    }
    return FieldSet.of(members, children);
  }

  /** Like difference, but a member of `other` also removes everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return this;
    const members = [...this.#members].filter((element) => !other.#members.has(element));
    const children: [string, FieldSet][] = [];
    for (const [element, child] of this.#children) {
      if (other.#members.has(element)) continue;
      const theirs = other.#children.get(element);
      children.push([element, theirs ? child.recursiveDifference(theirs) : child]);
    }
    return FieldSet.of(members, children);
  }

  equals(other: FieldSet): boolean {
    if (this === other) return true;
    if (this.#members.size !== other.#members.size || this.#children.size !== other.#children.size) return false;
    for (const element of this.#members) if (!other.#members.has(element)) return false;
    for (const [element, child] of this.#children) {
      const theirs = other.#children.get(element);
      if (!theirs || !child.equals(theirs)) return false;
    }
    return true;
  }

  /** Every member path, depth first: a node's members, then its children (upstream iteration order). */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (set: FieldSet, prefix: string[]): void => {
      for (const element of set.memberElements()) out.push([...prefix, element]);
      for (const element of set.childElements()) walk(set.child(element), [...prefix, element]);
    };
    walk(this, []);
    return out;
  }

  get size(): number {
    let count = this.#members.size;
    for (const child of this.#children.values()) count += child.size;
    return count;
  }
}
