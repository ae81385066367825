// The calling thread's CPU clock, for the sandbox's budgets. Reading it is a system call (getrusage), several
// microseconds in the middle of a sync, where an evaluation takes tens: a batch of evaluations started within a few
// milliseconds of each other can share one reading. A thread's CPU time never runs ahead of the wall clock, so a
// reading taken `w` ms of wall time ago, plus `w`, is never below the clock now and at most `w` above it.

export interface ThreadCpuClockOptions {
  /** The thread's CPU time in ms (default: process.threadCpuUsage()). */
  read?: () => number;
}

/** CPU time of the calling thread in milliseconds. */
function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

export class ThreadCpuClock {
  readonly #read: () => number;
  #cpu = 0;
  #wall = Number.NEGATIVE_INFINITY;

  constructor({ read = threadCpuMs }: ThreadCpuClockOptions = {}) {
    this.#read = read;
  }

  /** The clock now, read afresh (`wallNow`: performance.now() at the call). */
  now(wallNow: number): number {
    this.#cpu = this.#read();
    this.#wall = wallNow;
    return this.#cpu;
  }

  /**
   * A value no lower than the clock now and at most `slackMs` above it: the last reading plus the wall time since,
   * while that is within `slackMs`, else a fresh reading. A budget started from it is never spent early, and at most
   * `slackMs` late.
   */
  atMost(wallNow: number, slackMs: number): number {
    const since = wallNow - this.#wall;
    return since >= 0 && since <= slackMs ? this.#cpu + since : this.now(wallNow);
  }
}
