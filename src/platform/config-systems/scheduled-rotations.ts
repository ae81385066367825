// Scheduled key rotations (`platform start --signing-key-rotation-interval`, `--encryption-key-rotation-interval`):
// window tasks that rotate a key once its interval has passed since the last scheduled rotation, inside the
// maintenance window when one is set. The time of the last one is kept in the store, so a new leader (or a restart)
// continues the schedule; the first start only begins counting.

import type { KeyValueStore } from "../../storage/types.ts";
import type { WindowTask } from "./maintenance.ts";

export const ROTATIONS_PREFIX = "/internal/maintenance/rotations/";

export interface ScheduledRotation {
  name: "signing-key" | "encryption-key";
  intervalMs: number;
  /** Rotates and says what it did (key ids only). */
  rotate(): Promise<string>;
}

async function lastRotation(storage: KeyValueStore, key: string, now: Date) {
  const record = await storage.get(key);
  if (record) return { at: Date.parse((JSON.parse(record.value) as { at: string }).at), revision: record.revision };
  // The schedule starts now: a first start does not rotate keys it has just made.
  const created = await storage.create(key, JSON.stringify({ at: now.toISOString() })).catch(() => undefined);
  return created ? { at: now.getTime(), revision: created.revision } : undefined;
}

export function scheduledRotationTask(storage: KeyValueStore, rotation: ScheduledRotation): WindowTask {
  const key = `${ROTATIONS_PREFIX}${rotation.name}`;
  return {
    name: `${rotation.name} rotation`,
    when: "due",
    async due(now) {
      const last = await lastRotation(storage, key, now);
      return last !== undefined && now.getTime() - last.at >= rotation.intervalMs;
    },
    async run(now) {
      const last = await storage.get(key);
      const result = await rotation.rotate();
      const value = JSON.stringify({ at: now.toISOString() });
      if (last) await storage.update(key, value, last.revision);
      else await storage.create(key, value);
      return result;
    },
  };
}
