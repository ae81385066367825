// Waiting in tests for what happens asynchronously (a watch event, a timer's run, another replica's write): the
// condition decides, never a time. The limit only ends a wait that will never pass; on a busy machine a condition
// may take seconds, so it is generous.

/** Polls `check` every 10 ms until it holds; fails, naming `what`, after `seconds` (default 120). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, seconds = 120): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
