// <data-dir>/status.json: what a running virtual cluster says about itself. The runtime (runtime.ts) rewrites it every
// few seconds; `virtualcluster create` waits for it and `virtualcluster list` shows it (lifecycle/local-runtime.ts).
// It holds no credentials, so people may read it too.

import { readFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ForwarderStats } from "./connect/audit-forwarder.ts";
import type { ConnectionState } from "./connect/platform-connection.ts";
import type { SyncerStats } from "./syncer/stats.ts";

export const STATUS_FILE = "status.json";

export interface RuntimeStatus {
  name: string;
  namespace: string;
  /** The virtual cluster's API. */
  url: string;
  /** Absent when the settings ask for no platform connection. */
  platform?: ConnectionState;
  syncer: SyncerStats;
  /** Sending audit events to the platform; absent when audit is off or there is no platform. */
  audit?: ForwarderStats;
}

export function runtimeStatusPath(dataDir: string): string {
  return join(dataDir, STATUS_FILE);
}

/** Rewrites the file (mode 0644) through a temporary file, so a reader never sees it half-written. */
export async function writeRuntimeStatus(dataDir: string, status: RuntimeStatus): Promise<void> {
  const path = runtimeStatusPath(dataDir);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(status, null, 2)}\n`, { mode: 0o644 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The last status the runtime wrote; undefined when there is none (not started yet, or unreadable). */
export function readRuntimeStatus(dataDir: string): RuntimeStatus | undefined {
  try {
    return JSON.parse(readFileSync(runtimeStatusPath(dataDir), "utf8")) as RuntimeStatus;
  } catch {
    return undefined;
  }
}
