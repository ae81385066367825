// The datastore side of the audit log: the store the configuration names, the background writer with its spool,
// and the retention sweep. Runs in the audit worker (audit-worker.ts), next to the file sink, so both are fed from
// the same event lines.

import { setInterval } from "node:timers";
import { DatastoreWriter } from "./datastore-writer.ts";
import { openAuditStore } from "./open-audit-store.ts";
import type { AuditSearch, AuditSearchResult, AuditStore, StoredAuditEvent } from "./types.ts";

/** Retention when `dataStoreTTL` is unset or 0: 30 days. */
export const DEFAULT_TTL_HOURS = 720;
/** How often expired events are deleted. */
export const DEFAULT_SWEEP_INTERVAL_MS = 10 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

export type DatastoreReport =
  | { kind: "failure"; message: string }
  | { kind: "recovered" }
  | { kind: "dropped"; count: number; reason: string }
  | { kind: "written"; count: number }
  | { kind: "swept"; count: number }
  | { kind: "sweep-failure"; message: string };

export interface AuditDatastoreSettings {
  /** Empty: embedded in the data directory; otherwise a postgres:// address. */
  endpoint: string;
  /** Hours to keep events; unset or 0: DEFAULT_TTL_HOURS. */
  ttlHours?: number;
}

export interface AuditDatastoreOptions extends AuditDatastoreSettings {
  dataDir: string;
  report: (report: DatastoreReport) => void;
  sweepIntervalMs?: number;
  maxSpooledEvents?: number;
  retryDelayMs?: number;
  now?: () => number;
  /** A store to use instead of opening the configured one (tests of outages). */
  store?: AuditStore;
}

export class AuditDatastore {
  readonly endpoint: string;
  readonly store: AuditStore;
  private readonly writer: DatastoreWriter;
  private readonly options: AuditDatastoreOptions;
  private ttlHours: number;
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;

  constructor(options: AuditDatastoreOptions) {
    this.options = options;
    this.endpoint = options.endpoint;
    this.ttlHours = options.ttlHours || DEFAULT_TTL_HOURS;
    const report = options.report;
    this.store =
      options.store ??
      openAuditStore({
        endpoint: options.endpoint,
        dataDir: options.dataDir,
        onIdleError: (error) => report({ kind: "failure", message: error.message }),
      });
    this.writer = new DatastoreWriter({
      store: this.store,
      maxSpooledEvents: options.maxSpooledEvents,
      retryDelayMs: options.retryDelayMs,
      onFailure: (error) => report({ kind: "failure", message: error.message }),
      onRecovered: () => report({ kind: "recovered" }),
      onDropped: (count, reason) => report({ kind: "dropped", count, reason }),
      onWritten: (count) => report({ kind: "written", count }),
    });
    this.timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
    this.timer.unref();
    this.sweep();
  }

  /** A new TTL applies from the next sweep. */
  setTtl(ttlHours: number | undefined): void {
    this.ttlHours = ttlHours || DEFAULT_TTL_HOURS;
  }

  add(lines: readonly string[], instance: string): void {
    this.writer.add(lines, instance, this.now());
  }

  spooled(): number {
    return this.writer.spooled();
  }

  search(query: AuditSearch): Promise<AuditSearchResult> {
    return this.store.search(query);
  }

  byAuditId(auditID: string): Promise<StoredAuditEvent[]> {
    return this.store.byAuditId(auditID);
  }

  /** What is spooled now is written (or the datastore is failing). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Deletes what is older than the TTL now (also run every sweep interval). */
  sweep(): Promise<void> {
    const run = async () => {
      try {
        const count = await this.store.sweep(this.now() - this.ttlHours * HOUR_MS);
        if (count > 0) this.options.report({ kind: "swept", count });
      } catch (error) {
        this.options.report({ kind: "sweep-failure", message: (error as Error).message });
      }
    };
    // One sweep at a time; a sweep asked for during another runs after it, with the clock of then.
    this.sweeping = (this.sweeping ?? Promise.resolve()).then(run);
    return this.sweeping;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.writer.close();
    await this.sweeping;
    await this.store.close();
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}
