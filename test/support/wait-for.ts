// Polling for state another process reports asynchronously (a runtime's status, the platform's view of it).

/**
 * Polls every 200 ms until `check` passes; errors meanwhile count as "not yet". The limit only ends a wait that will
 * never pass (with the last error): on a loaded machine the condition may take minutes, so it is generous.
 */
export async function waitFor(check: () => Promise<boolean>, what: string, seconds = 300): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}
