// Gives the runtime's spare heap back to the system once it goes quiet. After start-up, and after every burst of
// syncing, V8 keeps the pages it grew into (start-up garbage, the burst's short-lived objects) as committed memory:
// measured, the idle runtime held about 16 MiB more than a full, memory-reducing collection leaves. V8's own memory
// reducer does not release them in a process that sits idle on its event loop, so the runtime asks for that
// collection itself: once after start-up, and once whenever work stopped for `quietMs`. Each is a full compacting
// collection of a few tens of MiB, a pause of tens of milliseconds at a moment with nothing else to do.

/** V8's gc() of a process started with --expose-gc, with the options this uses. */
export type ExposedGc = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/** The process's gc() when Node runs with --expose-gc (RUNTIME_NODE_FLAGS), else undefined. */
export function exposedGc(): ExposedGc | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === "function" ? (gc as ExposedGc) : undefined;
}

export interface HeapCompactorOptions {
  gc: ExposedGc;
  /** A number that changes whenever work happens (syncs, requests). */
  work(): number;
  /** How long work must have stopped before the heap is compacted (default 10 s). */
  quietMs?: number;
}

export class HeapCompactor {
  readonly #options: HeapCompactorOptions;
  #timer?: NodeJS.Timeout;
  /** The work count when last looked at, and whether it changed since the last compaction. */
  #seen: number;
  #dirty = false;
  /** Compactions so far (for tests and the status). */
  compactions = 0;

  constructor(options: HeapCompactorOptions) {
    this.#options = options;
    this.#seen = options.work();
  }

  /** Compacts now, then whenever work stops for quietMs after having happened. */
  start(): void {
    this.compact();
    const quietMs = this.#options.quietMs ?? 10_000;
    this.#timer = setInterval(() => this.look(), quietMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  compact(): void {
    this.#options.gc({ type: "major", execution: "sync", flavor: "last-resort" });
    this.compactions++;
    this.#dirty = false;
  }

  /** The periodic look (every quietMs): compacts when work happened before the last look and none since. */
  look(): void {
    const now = this.#options.work();
    if (now !== this.#seen) {
      this.#seen = now;
      this.#dirty = true;
      return;
    }
    if (this.#dirty) this.compact();
  }
}
