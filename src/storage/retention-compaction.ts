// Compaction by age: revisions stay readable for `retentionMs` (a watch or paged list can resume from anything that
// recent), and older ones are compacted away. Each tick samples the current revision; the compaction target is the
// newest sample at least `retentionMs` old, so with ticks every interval the readable history is between the
// retention and the retention plus one interval. kube-apiserver's compactor is this with retention = interval.

import type { KeyValueStore } from "./types.ts";

export interface CompactionRun {
  /** When the compaction started. */
  at: Date;
  durationMs: number;
  /** The compacted revision afterwards (the oldest readable one). */
  revision: number;
}

export interface RetentionCompactionOptions {
  storage: KeyValueStore;
  retentionMs: number;
  /**
   * Asked before each compaction: false skips it (etcd: another replica compacted this interval, see
   * etcd-compaction-turn.ts). Gets the target revision.
   */
  takeTurn?(target: number): Promise<boolean>;
  /** The clock (tests). */
  now?(): number;
}

interface Sample {
  at: number;
  revision: number;
}

export class RetentionCompaction {
  /** The last compaction this process made. */
  last?: CompactionRun;
  private readonly options: RetentionCompactionOptions;
  private samples: Sample[] = [];

  constructor(options: RetentionCompactionOptions) {
    this.options = options;
  }

  /** Samples the revision and compacts what is old enough; resolves to the run, or undefined if none was due. */
  async tick(): Promise<CompactionRun | undefined> {
    const { storage } = this.options;
    const now = this.options.now?.() ?? Date.now();
    this.samples.push({ at: now, revision: await storage.currentRevision() });
    const old = this.samples.findLastIndex((sample) => sample.at <= now - this.options.retentionMs);
    if (old < 0) return undefined;
    // Older samples are of no more use; the target stays until a compaction reaches it (the turn may be another's).
    this.samples = this.samples.slice(old);
    const target = this.samples[0].revision;
    if (target <= (await storage.compactedRevision())) return undefined;
    if (this.options.takeTurn && !(await this.options.takeTurn(target))) return undefined;
    const started = performance.now();
    const at = new Date();
    const keep = (await storage.currentRevision()) - target;
    const revision = await storage.compact(Math.max(0, keep));
    this.samples = this.samples.filter((sample) => sample.revision > revision);
    this.last = { at, durationMs: performance.now() - started, revision };
    return this.last;
  }
}
