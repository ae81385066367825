// Gives the runtime's spare heap back to the system once it goes quiet. After start-up, and after every burst of
// syncing, V8 keeps the pages it grew into (start-up garbage, the burst's short-lived objects) as committed memory:
// measured, the idle runtime held about 16 MiB more than a full, memory-reducing collection leaves. V8's own memory
// reducer does not release them in a process that sits idle on its event loop, so the runtime asks for that
// collection itself: once start-up is over, and whenever work happened and then stopped for a while. Each is a full compacting collection of a few tens of MiB, a pause of tens of milliseconds at a moment with
// nothing else to do.

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
  /** How often it looks whether work stopped (default 5 s). */
  quietMs?: number;
  /**
   * With it, start() compacts only once no work happened for this long (the work start-up set off, such as a
   * runtime's first syncs, ends first), waiting at most quietMs; without it, at once.
   */
  settleMs?: number;
}

export class HeapCompactor {
  readonly #options: HeapCompactorOptions;
  readonly #quietMs: number;
  #timer?: NodeJS.Timeout;
  /** The work count at the last look, and whether work happened since the last compaction. */
  #seen: number;
  #dirty = false;
  #stopped = false;
  /** Compactions so far. */
  compactions = 0;

  constructor(options: HeapCompactorOptions) {
    this.#options = options;
    this.#quietMs = options.quietMs ?? 5_000;
    this.#seen = options.work();
  }

  /** Compacts once start-up is over (now, or once settled: settleMs), then looks every quietMs. */
  start(): void {
    const { settleMs } = this.#options;
    if (settleMs) this.#settle(settleMs, 0);
    else this.#compactAndLook();
  }

  /** Looks every settleMs until a look finds no new work (or quietMs passed), then compacts. */
  #settle(settleMs: number, waited: number): void {
    this.#timer = setTimeout(() => {
      if (this.#stopped) return;
      const now = this.#options.work();
      const busy = now !== this.#seen;
      this.#seen = now;
      if (busy && waited + settleMs < this.#quietMs) this.#settle(settleMs, waited + settleMs);
      else this.#compactAndLook();
    }, settleMs);
    this.#timer.unref();
  }

  #compactAndLook(): void {
    this.compact();
    this.#schedule(this.#quietMs);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  compact(): void {
    this.#options.gc({ type: "major", execution: "sync", flavor: "last-resort" });
    this.compactions++;
    this.#dirty = false;
    // The collection is not work: a count that follows CPU (the platform's cpuBursts) would otherwise see its cost at
    // the next look and compact again at the one after, every other look while the process sits idle.
    this.#seen = this.#options.work();
  }

  /** The periodic look: compacts when work happened before and none since the previous look. */
  look(): void {
    const now = this.#options.work();
    if (now !== this.#seen) {
      this.#seen = now;
      this.#dirty = true;
      return;
    }
    if (this.#dirty) this.compact();
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.look();
      this.#schedule(this.#quietMs);
    }, ms);
    this.#timer.unref();
  }
}
