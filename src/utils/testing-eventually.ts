// Waiting in tests for what happens asynchronously (a watch event, a timer's run, another replica's write, another
// process's state): the condition decides, never a time. The limit only ends a wait that will never pass; on a busy
// machine a condition may take seconds or minutes, so it is generous.

export interface EventuallyOptions {
  /** The limit (default 120). */
  seconds?: number;
  /** How often `check` runs (default 10 ms: in-process state; another process's state is polled less often). */
  intervalMs?: number;
  /** Errors from `check` count as "not yet" (the last one is reported if the limit passes); by default they fail. */
  errorsMeanNotYet?: boolean;
}

/** Polls `check` until it holds; fails, naming `what`, once the limit passed. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  { seconds = 120, intervalMs = 10, errorsMeanNotYet = false }: EventuallyOptions = {},
): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      if (!errorsMeanNotYet) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${seconds} s waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
