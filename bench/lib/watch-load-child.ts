// Child-process entry of the watch benchmark's client side: receives WatchLoadOptions (without onPhase) over IPC,
// reports {phase} when the measured phase starts and ends, then {result} or {error}, and exits.

import { runWatchLoad, type WatchLoadOptions } from "./watch-load.ts";

process.once("message", async (options: Omit<WatchLoadOptions, "onPhase">) => {
  try {
    const result = await runWatchLoad({ ...options, onPhase: (phase) => process.send?.({ phase }) });
    process.send?.({ result });
  } catch (error) {
    process.send?.({ error: error instanceof Error ? error.message : String(error) });
  }
  process.disconnect?.();
});
