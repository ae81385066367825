// kube-apiserver's in-flight flags, shared by the commands that serve an API (`platform start`, `apiserver`):
// --max-requests-inflight and --max-mutating-requests-inflight, 0 for no limit. The server's timeouts have no
// flags, as in kube-apiserver; their defaults are in src/http/server-limits.ts.

import { type Command, InvalidArgumentError } from "commander";
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "../http/server-limits.ts";

export interface InflightFlags {
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
}

function count(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError("must be a whole number (0 or more; 0: no limit)");
  }
  return n;
}

/** Adds the two flags to a command; its action reads them with inflightLimits(). */
export function addInflightOptions(command: Command): Command {
  return command
    .option(
      "--max-requests-inflight <n>",
      `read-only requests served at once; more get 429 with Retry-After (0: no limit; default ${DEFAULT_SERVER_LIMITS.maxRequestsInflight})`,
      count,
    )
    .option(
      "--max-mutating-requests-inflight <n>",
      `mutating requests served at once; more get 429 with Retry-After (0: no limit; default ${DEFAULT_SERVER_LIMITS.maxMutatingRequestsInflight})`,
      count,
    );
}

/** The server limits the flags set (unset ones keep their defaults). */
export function inflightLimits(flags: InflightFlags): Partial<ServerLimits> {
  return {
    maxRequestsInflight: flags.maxRequestsInflight,
    maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
  };
}
