// What flows from the host copy back to the virtual object (spec rule 2: "If reverseExpression is undefined, none is
// applied host to virtual"), decided per changed place since the last sync:
//  - a label or annotation a patch reaches: back through its reverseExpression; a patch without one keeps the host's
//    change from flowing back (the next forward sync restores the host copy from the virtual object);
//  - a label or annotation no patch reaches: back as it is (the reference: "labels/annotations changed on the host
//    flow back");
//  - any other place a reverseExpression's path reaches (a subset's port name, a spec field): back through it;
//  - everything else: never back.
// Markers and the syncer's own annotations never move, and a place changed on both sides keeps the virtual value.

import { isDeepStrictEqual } from "node:util";
import type { CompiledPatch, CompiledPatchSet } from "../patches/compile.ts";
import { pathCovers } from "../patches/path-covers.ts";
import { findPathMatches } from "../patches/path-navigate.ts";
import { type LabelMap, putLabel } from "../translate/labels.ts";
import type { Translator } from "../translate/translator.ts";
import { isCopiedAnnotation } from "./host-metadata.ts";
import type { WireObject } from "./types.ts";

/** One side's state at the last sync, of every place that can flow back. */
export interface SyncSnapshot {
  labels: LabelMap;
  annotations: LabelMap;
  /** JSON text of the values at the places reverse patches reach outside labels and annotations, by JSON pointer. */
  fields?: Record<string, string>;
}

type Keys = (string | number)[];

const isMetadataMap = (keys: readonly (string | number)[]) =>
  keys.length >= 2 && keys[0] === "metadata" && (keys[1] === "labels" || keys[1] === "annotations");

const pointerOf = (keys: Keys): string =>
  keys.map((key) => `/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
const keysOf = (pointer: string): string[] =>
  pointer
    .split("/")
    .slice(1)
    .map((key) => key.replace(/~1/g, "/").replace(/~0/g, "~"));

/** The value at `keys` (array indices as strings too), or undefined. */
function valueAt(root: unknown, keys: readonly string[]): unknown {
  let node = root;
  for (const key of keys) {
    if (Array.isArray(node)) node = node[Number(key)];
    else if (typeof node === "object" && node !== null && Object.hasOwn(node, key)) node = (node as LabelMap)[key];
    else return undefined;
  }
  return node;
}

const textOf = (value: unknown): string | undefined => (value === undefined ? undefined : JSON.stringify(value));

/** The reverse patches of a list whose paths reach outside labels and annotations. */
export function reverseFieldPatches(set: CompiledPatchSet | undefined): readonly CompiledPatch[] {
  return (set?.patches ?? []).filter(
    (patch) =>
      patch.mode === "expression" &&
      patch.expressions.toVirtual !== undefined &&
      !isMetadataMap(patch.segments.map((s) => (s.kind === "key" ? s.key : "*"))),
  );
}

/** The virtual object's snapshot: its labels and annotations, and its values at the places the host snapshot has. */
export function virtualSnapshotOf(virtual: WireObject | undefined, host: SyncSnapshot | undefined): SyncSnapshot {
  const snapshot: SyncSnapshot = {
    labels: { ...virtual?.metadata?.labels },
    annotations: { ...virtual?.metadata?.annotations },
  };
  if (host?.fields) {
    snapshot.fields = {};
    for (const pointer of Object.keys(host.fields)) {
      const text = textOf(valueAt(virtual, keysOf(pointer)));
      if (text !== undefined) snapshot.fields[pointer] = text;
    }
  }
  return snapshot;
}

function filtered(map: LabelMap | undefined, keep: (key: string) => boolean): LabelMap {
  const result: LabelMap = {};
  for (const key in map) if (keep(key)) result[key] = map[key];
  return result;
}

/**
 * The host object's snapshot: labels and annotations without the markers and the syncer's own annotations (which
 * never move back), and the values at the places `reversePatches` reach. Kept per synced object, so it stays small.
 */
export function hostSnapshotOf(
  object: WireObject | undefined,
  translator: Translator,
  reversePatches: readonly CompiledPatch[] = [],
): SyncSnapshot {
  const metadata = object?.metadata;
  const snapshot: SyncSnapshot = {
    labels: filtered(metadata?.labels, (key) => translator.virtualLabelKey(key) !== undefined),
    annotations: filtered(metadata?.annotations, isCopiedAnnotation),
  };
  if (reversePatches.length > 0 && object) {
    snapshot.fields = {};
    for (const patch of reversePatches) {
      for (const match of findPathMatches(object, patch.segments)) {
        if (match.exists && match.parent !== undefined)
          snapshot.fields[pointerOf(match.keys)] = JSON.stringify(match.value);
      }
    }
  }
  return snapshot;
}

/** How the patches govern a label or annotation key: which of them reaches it decides whether a change flows back. */
export type Governance = "none" | "reverse" | "forward-only";

export function governance(set: CompiledPatchSet | undefined, keys: readonly string[]): Governance {
  let result: Governance = "none";
  for (const patch of set?.patches ?? []) {
    if (patch.mode === "labels" || !pathCovers(patch.segments, keys)) continue;
    // Reference patches map a name both ways.
    if (patch.mode === "reference" || patch.expressions.toVirtual !== undefined) result = "reverse";
    else if (result === "none") result = "forward-only";
  }
  return result;
}

export interface CarryBackInput {
  /** The virtual object now. */
  virtual: WireObject;
  /** The host object now, and its snapshot (hostSnapshotOf). */
  host: WireObject;
  hostNow: SyncSnapshot;
  /** The host object with the reverse patches applied (`hostObjectForVirtual`). */
  reversed: WireObject;
  /** Both sides when they were last in sync; without it nothing flows back (the virtual side wins once). */
  last: { virtual: SyncSnapshot; host: SyncSnapshot } | undefined;
  translator: Translator;
  patches: CompiledPatchSet | undefined;
}

/** What the virtual object gets: whole label and annotation maps when they change, and single fields. */
export interface CarriedBack {
  labels?: LabelMap;
  annotations?: LabelMap;
  fields: { keys: string[]; value: unknown }[];
}

/** Keys whose value differs between two maps. */
function changedKeys(before: LabelMap | Record<string, string>, after: LabelMap | Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => before[key] !== after[key]);
}

function carryMap(input: CarryBackInput, map: "labels" | "annotations"): LabelMap | undefined {
  const { virtual, reversed, last, translator, patches, hostNow } = input;
  if (!last) return undefined;
  const current: LabelMap = { ...virtual.metadata?.[map] };
  const result: LabelMap = { ...current };
  const reversedMap: LabelMap = reversed.metadata?.[map] ?? {};
  for (const hostKey of changedKeys(last.host[map], hostNow[map])) {
    const key =
      map === "labels" ? translator.virtualLabelKey(hostKey) : isCopiedAnnotation(hostKey) ? hostKey : undefined;
    if (key === undefined) continue;
    if (current[key] !== last.virtual[map][key]) continue; // virtual changes win
    const governed = governance(patches, ["metadata", map, hostKey]);
    if (governed === "forward-only") continue; // no reverseExpression: restored from the virtual object instead
    const value = governed === "reverse" ? reversedMap[hostKey] : hostNow[map][hostKey];
    if (value === undefined) delete result[key];
    else putLabel(result, key, value);
  }
  return isDeepStrictEqual(result, current) ? undefined : result;
}

/**
 * What the virtual object should get because someone changed the host copy since the last sync (see the rules at the
 * top); undefined when nothing is to be carried back.
 */
export function carryBack(input: CarryBackInput): CarriedBack | undefined {
  const { last, hostNow, virtual, reversed } = input;
  if (!last) return undefined;
  const result: CarriedBack = { fields: [] };
  const labels = carryMap(input, "labels");
  const annotations = carryMap(input, "annotations");
  if (labels) result.labels = labels;
  if (annotations) result.annotations = annotations;
  const before = last.host.fields ?? {};
  const now = hostNow.fields ?? {};
  for (const pointer of changedKeys(before, now)) {
    const keys = keysOf(pointer);
    if (textOf(valueAt(virtual, keys)) !== last.virtual.fields?.[pointer]) continue; // virtual changes win
    result.fields.push({ keys, value: valueAt(reversed, keys) });
  }
  return labels || annotations || result.fields.length > 0 ? result : undefined;
}
