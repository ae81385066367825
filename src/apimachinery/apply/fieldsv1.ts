// The FieldsV1 JSON encoding of field sets, as stored in metadata.managedFields[].fieldsV1: one object level per
// path element, `{}` for a member, and "." inside a node that is both a member and a parent.
// Also the entry point for the other field-set helpers, which live in their own files.

import { setOwn } from "../json-values.ts";
import { type FieldsV1, isPlainObject, type JsonMap } from "../types.ts";
import { FieldSet } from "./field-set.ts";
import { pathElement } from "./path-element.ts";

export { formatFieldPath } from "./field-path.ts";
export { type FieldPath, FieldSet } from "./field-set.ts";
export { fieldSetFromObject } from "./field-set-from-object.ts";

/** Recursion follows the set: bounded by MAX_NESTING_DEPTH, as FieldSet's operations are. */
function emit(set: FieldSet, includeSelf: boolean): FieldsV1 {
  const out: FieldsV1 = {};
  if (includeSelf) out["."] = {};
  const members = new Set(set.memberElements());
  const children = new Set(set.childElements());
  const all = [...new Set([...members, ...children])].sort(pathElement.compare);
  for (const element of all) {
    setOwn(out, element, children.has(element) ? emit(set.child(element), members.has(element)) : {});
  }
  return out;
}

export function toFieldsV1(set: FieldSet): FieldsV1 {
  return emit(set, false);
}

/**
 * Reads one level; `member` tells whether the node itself is in the set (a leaf `{}` or a "." marker). Recursion
 * follows the JSON, part of a body measured against MAX_NESTING_DEPTH.
 */
function read(json: JsonMap, where: string): { set: FieldSet; member: boolean } {
  let member = false;
  const members: string[] = [];
  const children: [string, FieldSet][] = [];
  for (const key of Object.keys(json)) {
    const value = json[key];
    if (!isPlainObject(value)) throw new TypeError(`fieldsV1${where}: ${JSON.stringify(key)} must map to an object`);
    if (key === ".") {
      member = true;
      continue;
    }
    const element = pathElement.normalize(key);
    if (element === undefined) continue;
    const child = read(value, `${where}[${JSON.stringify(key)}]`);
    if (child.member) members.push(element);
    children.push([element, child.set]);
  }
  const set = FieldSet.of(members, children);
  // A node without (known) children is a leaf, hence a member.
  return { set, member: member || (members.length === 0 && children.length === 0) };
}

/** Throws TypeError on malformed input (non-object levels, bad keys); unknown key kinds are skipped. */
export function fromFieldsV1(json: FieldsV1): FieldSet {
  if (!isPlainObject(json)) throw new TypeError("fieldsV1 must be an object");
  return read(json, "").set;
}
