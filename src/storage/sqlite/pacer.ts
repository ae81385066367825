// When the next housekeeping step (a compaction chunk, a vacuum step) may run. Steps run on the event loop like the
// group commit does, so each one delays the writes queued behind it. With no write waiting, the next step runs in
// the next macrotask; while writes wait, at most one step runs per `busyGapMs`, so a stream of writes sees a step
// in front of a few of its commits, not of each, and housekeeping still moves on under any load.

export interface PacerOptions {
  /** True while writes wait to be committed. */
  busy(): boolean;
  /** Least time between two steps while busy (default 10 ms). */
  busyGapMs?: number;
}

export class Pacer {
  private readonly options: PacerOptions;
  private last = Number.NEGATIVE_INFINITY;

  constructor(options: PacerOptions) {
    this.options = options;
  }

  /** Resolves in a later macrotask, once a step may run. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      const attempt = () => {
        const gap = this.last + (this.options.busyGapMs ?? 10) - performance.now();
        if (!this.options.busy() || gap <= 0) {
          this.last = performance.now();
          resolve();
        } else {
          setTimeout(attempt, Math.ceil(gap)).unref();
        }
      };
      setImmediate(attempt);
    });
  }
}
