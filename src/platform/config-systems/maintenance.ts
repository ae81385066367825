// The cloud maintenance window on the leader: disruptive background work waits for it. Every check (default each
// minute) the scheduler works out the window's next (or current) occurrence, writes it to the Config's status
// (status.maintenance), and once per open occurrence runs the window tasks: the store rebuild (SQLite's full
// VACUUM, beyond the incremental steps) and the key rotations that are due. etcd defragmentation and agent-driven
// restarts ask `isOpen()` before they start. Without a window nothing is held back, and the window-only tasks do
// not run (as before windows existed); rotations then run as soon as they are due.

import type { Logger } from "pino";
import { currentOrNextWindow, isWindowOpen } from "../../config/maintenance-window.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { BackgroundTask as LeaderTask } from "./background-task.ts";
import type { ConfigStatusWriter } from "./config-status.ts";

export const DEFAULT_MAINTENANCE_CHECK_MS = 60_000;

export interface WindowTask {
  name: string;
  /** Runs only inside a window (never without one), or whenever due ("due"). */
  when: "window" | "due";
  /** Whether there is work now (a rotation's interval has passed); default always. */
  due?(now: Date): Promise<boolean> | boolean;
  /** Does the work and says what it did, in one line without secrets. */
  run(now: Date): Promise<string>;
}

export interface MaintenanceOptions {
  settings: LiveSettings;
  status?: ConfigStatusWriter;
  tasks: WindowTask[];
  /** The clock (tests control it). */
  now?: () => Date;
  checkIntervalMs?: number;
  logger?: Logger;
}

export class MaintenanceScheduler {
  private readonly options: MaintenanceOptions;
  private readonly now: () => Date;
  /** The start of the last occurrence whose window tasks ran (they run once per occurrence). */
  private ranOccurrence?: number;
  private running?: Promise<void>;

  constructor(options: MaintenanceOptions) {
    this.options = options;
    this.now = options.now ?? (() => new Date());
  }

  /** Whether disruptive work may start now (no window, or inside it). */
  isOpen(): boolean {
    return isWindowOpen(this.options.settings.current().cloud.maintenanceWindow, this.now());
  }

  /** One check: the status, then the tasks that may and need to run. Checks never overlap. */
  check(): Promise<void> {
    this.running ??= this.checkOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  leaderTask(): LeaderTask {
    let timer: NodeJS.Timeout | undefined;
    const tick = () =>
      void this.check().catch((error) => this.options.logger?.warn({ err: String(error) }, "maintenance check failed"));
    let unsubscribe: (() => void) | undefined;
    return {
      name: "maintenance window",
      start: () => {
        tick();
        timer = setInterval(tick, this.options.checkIntervalMs ?? DEFAULT_MAINTENANCE_CHECK_MS);
        timer.unref();
        // A new window (or none) shows in the status at once, and may open now.
        unsubscribe = this.options.settings.onChange((next, previous) => {
          if (JSON.stringify(next.cloud) !== JSON.stringify(previous.cloud)) tick();
        });
      },
      stop: () => {
        clearInterval(timer);
        unsubscribe?.();
      },
    };
  }

  private async checkOnce(): Promise<void> {
    const now = this.now();
    const window = this.options.settings.current().cloud.maintenanceWindow;
    const occurrence = window && currentOrNextWindow(window, now);
    const open = !occurrence || occurrence.start.getTime() <= now.getTime();
    const results: string[] = [];
    const firstInOccurrence = occurrence !== undefined && open && this.ranOccurrence !== occurrence.start.getTime();
    for (const task of this.options.tasks) {
      if (task.when === "window" && !firstInOccurrence) continue;
      if (task.when === "due" && !open) {
        // Asked anyway: a schedule begins counting at the first check, not when the first window opens.
        await task.due?.(now);
        continue;
      }
      if (task.due && !(await task.due(now))) continue;
      try {
        results.push(`${task.name}: ${await task.run(now)}`);
      } catch (error) {
        results.push(`${task.name}: failed: ${(error as Error).message}`);
      }
    }
    if (firstInOccurrence) this.ranOccurrence = occurrence.start.getTime();
    for (const line of results) this.options.logger?.info({ window: Boolean(window) }, `maintenance: ${line}`);
    await this.options.status?.setMaintenance(
      occurrence && {
        nextWindowStart: occurrence.start.toISOString(),
        nextWindowEnd: occurrence.end.toISOString(),
        open,
        ...(results.length > 0 ? { lastRun: { time: now.toISOString(), results } } : {}),
      },
    );
  }
}
