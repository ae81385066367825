// Long-running commands (platform start, apiserver, run) stop the same way: the first SIGINT or SIGTERM closes the
// server cleanly and exits 0; a repeated signal while closing is ignored.

import type { Logger } from "pino";

export function stopOnSignal(logger: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    try {
      await close();
    } finally {
      process.exit(0);
    }
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
