// Process settings of the runtime (`virtualcluster run`), read only when a process starts, so a process without
// them re-executes itself with them (same PID, same stdio), and `virtualcluster create` starts it with them.
// - V8: under a sync burst V8 grows the young generation to two 32 MiB semi-spaces and keeps them; capped at 4 MiB
//   the runtime holds tens of MB less, for scavenges that run more often but each copy less (bench/runtime-sync.ts
//   saw no change in CPU per synced object). --expose-gc lets it give its spare heap back once it goes quiet
//   (heap-compactor.ts).
// - glibc malloc: every thread that allocates gets an arena of its own, and memory freed in one stays with it; the
//   freed blocks are mostly V8's compiler zones (32 KiB segments, about 20 MiB at the peak of start-up), which then
//   sit between live blocks where they cannot be given back. With one arena, blocks of 32 KiB and more mapped on
//   their own (given back when freed) and the heap's top trimmed past a fixed 128 KiB (glibc otherwise raises both
//   bounds as the process frees large blocks), the idle runtime holds 10-15 MB less, and the same from run to run.
// - Node's compile cache, which bin/virtualcluster.js turns on for every command, is off for the built JavaScript of
//   these long-running processes: with it the idle runtime, started as an installed copy starts it, held 115.4-115.9
//   MiB, without it 110.6-111.1 (the 120 MB goal is 114.4 MiB); it saves them a few hundred milliseconds once. From
//   the TypeScript sources it stays on: there it spares them Node's type stripper.

export const RUNTIME_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--expose-gc"];
const MALLOC_TUNABLES = [
  "glibc.malloc.arena_max=1",
  "glibc.malloc.mmap_threshold=32768",
  "glibc.malloc.trim_threshold=131072",
];

const flagName = (flag: string) => flag.split("=", 1)[0].replace(/_/g, "-");

/** `wanted` flags not in effect yet; a flag the user gave with a value of their own counts as in effect. */
export function missingNodeFlags(
  wanted: readonly string[],
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? "").split(/\s+/)].filter(Boolean).map(flagName));
  return wanted.filter((flag) => !given.has(flagName(flag)));
}

/** RUNTIME_NODE_FLAGS not in effect yet. */
export function missingRuntimeNodeFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return missingNodeFlags(RUNTIME_NODE_FLAGS, execArgv, nodeOptions);
}

/** Whether this process runs the built JavaScript (dist/) rather than the TypeScript sources. */
const RUNS_BUILT_JAVASCRIPT = import.meta.url.endsWith(".js");

export interface RuntimeEnvironmentOptions {
  /** The process runs the built JavaScript (default: whether this one does). */
  builtJavaScript?: boolean;
}

/**
 * `env` with the runtime's malloc settings added to GLIBC_TUNABLES and, for the built JavaScript, Node's compile cache
 * turned off (a setting it already has is kept); `env` itself when it has them all.
 */
export function runtimeEnvironment(
  env: NodeJS.ProcessEnv,
  { builtJavaScript = RUNS_BUILT_JAVASCRIPT }: RuntimeEnvironmentOptions = {},
): NodeJS.ProcessEnv {
  const given = (env.GLIBC_TUNABLES ?? "").split(":").filter(Boolean);
  const names = new Set(given.map((tunable) => tunable.split("=", 1)[0]));
  const missing = MALLOC_TUNABLES.filter((tunable) => !names.has(tunable.split("=", 1)[0]));
  const cacheOff = builtJavaScript && env.NODE_DISABLE_COMPILE_CACHE === undefined;
  if (missing.length === 0 && !cacheOff) return env;
  const result: NodeJS.ProcessEnv = { ...env, GLIBC_TUNABLES: [...given, ...missing].join(":") };
  if (cacheOff) result.NODE_DISABLE_COMPILE_CACHE = "1";
  return result;
}

/**
 * Replaces this process with the same command line plus the missing `flags`, in runtimeEnvironment(). Call before
 * anything is started; where the platform has no execve (Windows), the process runs with the defaults.
 */
export function ensureNodeFlags(flags: readonly string[]): void {
  const missing = missingNodeFlags(flags, process.execArgv, process.env.NODE_OPTIONS);
  const env = runtimeEnvironment(process.env);
  if ((missing.length === 0 && env === process.env) || typeof process.execve !== "function") return;
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], env);
}
