// Ownership after a non-apply write (upstream managedFieldsUpdater + stripMetaManager around Updater.Update):
// the write is recorded under a temporary name, stripped of never-tracked metadata, then merged into the
// manager's existing Update entry, whose time changes only if the write changed something it now owns.

import type { JsonMap } from "../types.ts";
import type { Managed } from "./managers.ts";
import { stripNeverTracked } from "./tracked-fields.ts";
import { recordUpdate, type UpdaterOptions } from "./updater.ts";

// Not a JSON identifier, so it can never collide with a real manager.
const CURRENT_OPERATION = "current-operation";

export function trackUpdate(
  options: UpdaterOptions,
  before: JsonMap,
  after: JsonMap,
  managed: Managed,
  manager: string,
  time: string,
): Managed {
  const fields = recordUpdate(options, before, after, managed.fields, CURRENT_OPERATION);
  const times = new Map(managed.times);
  const current = fields.get(CURRENT_OPERATION);
  fields.delete(CURRENT_OPERATION);
  const set = current && stripNeverTracked(current.set);
  if (current && set && !set.isEmpty()) {
    const previous = fields.get(manager);
    fields.set(manager, {
      set: previous ? set.union(previous.set) : set,
      apiVersion: current.apiVersion,
      applied: false,
    });
    times.set(manager, time);
  }
  for (const id of [...times.keys()]) if (!fields.has(id)) times.delete(id);
  return { fields, times };
}
