// Keeps at most 10 Update entries (upstream capManagersManager): the oldest ones are merged, per API version,
// into an "ancient-changes" entry, so objects edited by many tools keep a bounded managedFields.

import { compareUtf8 } from "../../utils/utf8-compare.ts";
import { FieldSet } from "./field-set.ts";
import { type Managed, managerIdentifier } from "./managers.ts";

const MAX_UPDATE_MANAGERS = 10;

function seconds(time: string | undefined): number {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

export function capUpdateManagers(managed: Managed): Managed {
  const updaters = [...managed.fields].filter(([, versioned]) => !versioned.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return managed;
  updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || compareUtf8(a, b));
  const fields = new Map(managed.fields);
  const times = new Map(managed.times);
  const firstOfVersion = new Map<string, string>();
  let count = updaters.length;
  for (const manager of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const versioned = fields.get(manager);
    if (!versioned) continue;
    const version = versioned.apiVersion;
    const first = firstOfVersion.get(version);
    if (first === undefined) {
      firstOfVersion.set(version, manager);
      continue;
    }
    const bucket = managerIdentifier({ manager: "ancient-changes", operation: "Update", apiVersion: version });
    // An existing bucket is never merged into itself (upstream would drop it).
    if (manager === bucket) continue;
    if (!fields.has(bucket)) {
      const moved = fields.get(first);
      fields.delete(first);
      if (moved) fields.set(bucket, moved);
    }
    const merged = versioned.set.union(fields.get(bucket)?.set ?? FieldSet.empty);
    fields.set(bucket, { set: merged, apiVersion: version, applied: false });
    fields.delete(manager);
    // The bucket takes the time of the (more recent) entry merged into it.
    times.set(bucket, managed.times.get(manager));
    count--;
  }
  for (const id of times.keys()) if (!fields.has(id)) times.delete(id);
  return { fields, times };
}
