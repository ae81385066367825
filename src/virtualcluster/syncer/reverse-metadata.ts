import { isDeepStrictEqual } from "node:util";
import { type LabelMap, putLabel } from "../translate/labels.ts";
import type { Translator } from "../translate/translator.ts";
import { isCopiedAnnotation } from "./host-metadata.ts";
import type { WireObject } from "./types.ts";

/** The labels and annotations of an object at the moment it was last in sync. */
export interface MetadataSnapshot {
  labels: LabelMap;
  annotations: LabelMap;
}

export function snapshotOf(object: WireObject | undefined): MetadataSnapshot {
  return { labels: { ...object?.metadata?.labels }, annotations: { ...object?.metadata?.annotations } };
}

function filtered(map: LabelMap | undefined, keep: (key: string) => boolean): LabelMap {
  const result: LabelMap = {};
  for (const key in map) if (keep(key)) result[key] = map[key];
  return result;
}

/**
 * The labels and annotations of a host object that can move back to the virtual object: without the markers and
 * the syncer's own annotations, which never do. Kept per synced object between syncs, so they stay small.
 */
export function hostSnapshotOf(object: WireObject | undefined, translator: Translator): MetadataSnapshot {
  const metadata = object?.metadata;
  return {
    labels: filtered(metadata?.labels, (key) => translator.virtualLabelKey(key) !== undefined),
    annotations: filtered(metadata?.annotations, isCopiedAnnotation),
  };
}

export interface ReverseInput {
  /** The virtual object now. */
  virtual: WireObject;
  /** The host object now. */
  host: WireObject;
  /** The host object with the reverse patches applied (`hostObjectForVirtual`). */
  reversed: WireObject;
  /** Both sides when they were last in sync (the host's as hostSnapshotOf); without it the virtual side wins. */
  last: { virtual: MetadataSnapshot; host: MetadataSnapshot } | undefined;
  translator: Translator;
}

/** Keys whose value differs between two maps. */
function changedKeys(before: LabelMap, after: LabelMap): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => before[key] !== after[key]);
}

/** Applies host-side changes of one map to the virtual map; a key also changed on the virtual side keeps its value. */
function carryBack(
  target: LabelMap,
  changed: string[],
  toVirtualKey: (key: string) => string | undefined,
  reversed: LabelMap,
  virtualNow: LabelMap,
  virtualThen: LabelMap,
): void {
  for (const hostKey of changed) {
    const key = toVirtualKey(hostKey);
    if (key === undefined) continue;
    if (virtualNow[key] !== virtualThen[key]) continue; // virtual changes win
    const value = reversed[hostKey];
    if (value === undefined) delete target[key];
    else putLabel(target, key, value);
  }
}

/**
 * Labels and annotations the virtual object should get because someone changed them on the host since the last
 * sync, with the reverse patches applied; undefined when nothing is to be carried back. Only keys changed on the
 * host move, host-only markers and the syncer's own annotations never do, and a key changed on both sides keeps
 * the virtual value.
 */
export function reverseMetadata(input: ReverseInput): MetadataSnapshot | undefined {
  const { virtual, host, reversed, last, translator } = input;
  if (!last) return undefined;
  const now = hostSnapshotOf(host, translator);
  const current = snapshotOf(virtual);
  const result = snapshotOf(virtual);
  const reversedNow = snapshotOf(reversed);
  carryBack(
    result.labels,
    changedKeys(last.host.labels, now.labels),
    (key) => translator.virtualLabelKey(key),
    reversedNow.labels,
    current.labels,
    last.virtual.labels,
  );
  carryBack(
    result.annotations,
    changedKeys(last.host.annotations, now.annotations),
    (key) => (isCopiedAnnotation(key) ? key : undefined),
    reversedNow.annotations,
    current.annotations,
    last.virtual.annotations,
  );
  return isDeepStrictEqual(result, current) ? undefined : result;
}
