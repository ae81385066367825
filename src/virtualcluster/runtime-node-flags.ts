// V8 settings of the runtime process (`virtualcluster run`). Under a sync burst V8 grows the young generation to two
// 32 MiB semi-spaces and keeps them: capped at 4 MiB, the runtime holds tens of MB less, for scavenges that run more
// often but each copy less (bench/runtime-sync.ts saw no change in CPU per synced object). V8 reads the cap only
// when the process starts, so a process without it re-executes itself with it (same PID, same stdio).

export const RUNTIME_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4"];

/** Whether the flags (or the user's own young-generation size) are already in effect. */
export function hasRuntimeNodeFlags(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const given = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)];
  return given.some((flag) => flag.startsWith("--max-semi-space-size"));
}

/**
 * Replaces this process with the same command line plus RUNTIME_NODE_FLAGS unless they are in effect. Call before
 * anything is started; where the platform has no execve (Windows), the runtime runs with V8's defaults.
 */
export function ensureRuntimeNodeFlags(): void {
  if (hasRuntimeNodeFlags(process.execArgv, process.env.NODE_OPTIONS)) return;
  if (typeof process.execve !== "function") return;
  process.execve(
    process.execPath,
    [process.execPath, ...RUNTIME_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)],
    process.env,
  );
}
