// The long-running commands and the process settings each runs with. They apply only when a process image starts,
// so a process of such a command without them re-executes itself with them (ensureNodeFlags(): same PID, same stdio).

import { ensureNodeFlags, RUNTIME_NODE_FLAGS } from "../virtualcluster/runtime-node-flags.ts";
import { PLATFORM_NODE_FLAGS } from "./platform-memory.ts";

/** The Node flags of the command on this command line; undefined for a command that runs as it was started. */
export function processFlagsFor(argv: readonly string[]): readonly string[] | undefined {
  const [command, subcommand] = argv.slice(2);
  if (command === "platform" && subcommand === "start") return PLATFORM_NODE_FLAGS;
  // The agent keeps the runtime's settings: it stays as small as one.
  if (command === "run" || command === "agent") return RUNTIME_NODE_FLAGS;
  return undefined;
}

/** Re-executes this process with its command's settings when it lacks them; returns when it has them or needs none. */
export function ensureProcessSettings(argv: readonly string[]): void {
  const flags = processFlagsFor(argv);
  if (flags) ensureNodeFlags(flags);
}
