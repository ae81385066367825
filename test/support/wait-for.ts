// Polling for state another process reports asynchronously (a runtime's status, the platform's view of it).

import { eventually } from "../../src/utils/testing-eventually.ts";

/**
 * Polls every 200 ms until `check` passes; errors meanwhile count as "not yet". The limit only ends a wait that will
 * never pass (with the last error): on a loaded machine the condition may take minutes, so it is generous.
 */
export function waitFor(check: () => Promise<boolean>, what: string, seconds = 300): Promise<void> {
  return eventually(check, what, { seconds, intervalMs: 200, errorsMeanNotYet: true });
}
