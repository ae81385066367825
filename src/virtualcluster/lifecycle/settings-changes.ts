// What an upgrade changes in the stored settings, as field paths, so `create --upgrade` can say it instead of a bare
// "Updated". Lists and values are compared whole; maps field by field.

import { parse } from "yaml";

export interface SettingsChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

type Value = unknown;

const isMap = (value: Value): value is Record<string, Value> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function child(path: string, key: string): string {
  const part = /^[A-Za-z_][\w-]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  return path === "" ? part : part.startsWith("[") ? `${path}${part}` : `${path}.${part}`;
}

function compare(before: Value, after: Value, path: string, changes: SettingsChanges): void {
  if (isMap(before) && isMap(after)) {
    for (const key of Object.keys(before)) {
      if (!(key in after)) changes.removed.push(child(path, key));
      else compare(before[key], after[key], child(path, key), changes);
    }
    for (const key of Object.keys(after)) if (!(key in before)) changes.added.push(child(path, key));
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) changes.changed.push(path === "" ? "(all)" : path);
}

/** The field paths that differ between two settings texts (comments and formatting do not count). */
export function settingsChanges(beforeText: string, afterText: string): SettingsChanges {
  const changes: SettingsChanges = { added: [], changed: [], removed: [] };
  compare(parse(beforeText) ?? {}, parse(afterText) ?? {}, "", changes);
  return changes;
}

/** One line: "changed a.b; added c; removed d", or "unchanged". */
export function describeSettingsChanges(changes: SettingsChanges): string {
  const parts = (["changed", "added", "removed"] as const)
    .filter((kind) => changes[kind].length > 0)
    .map((kind) => `${kind} ${changes[kind].join(", ")}`);
  return parts.length === 0 ? "unchanged" : parts.join("; ");
}
