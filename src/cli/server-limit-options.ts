// The server-limit flags shared by the commands that serve an API (`platform start`, `apiserver`): kube-apiserver's
// --max-requests-inflight and --max-mutating-requests-inflight (the seats of flow control), and the connection caps
// --max-connections and --max-connections-per-client; 0 for no limit. The connection caps' defaults come from the
// process's open-file limit. The server's timeouts have no flags, as in kube-apiserver; every default is in
// src/http/server-limits.ts.

import { type Command, InvalidArgumentError } from "commander";
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "../http/server-limits.ts";

export interface ServerLimitFlags {
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
}

function count(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError("must be a whole number (0 or more; 0: no limit)");
  }
  return n;
}

/** Adds the four flags to a command; its action reads them with serverLimitsFromFlags(). */
export function addServerLimitOptions(command: Command): Command {
  const d = DEFAULT_SERVER_LIMITS;
  return command
    .option(
      "--max-requests-inflight <n>",
      `read-only requests served at once (with the next flag: the seats users share fairly); more wait their turn, and get 429 with Retry-After when their queue is full (0: no limit; default ${d.maxRequestsInflight})`,
      count,
    )
    .option(
      "--max-mutating-requests-inflight <n>",
      `mutating requests served at once (0: no limit; default ${d.maxMutatingRequestsInflight})`,
      count,
    )
    .option(
      "--max-connections <n>",
      `open client connections; more are closed as they are accepted, but for a reserve for health probes and admins (0: no limit; default ${d.maxConnections}, from the open-file limit)`,
      count,
    )
    .option(
      "--max-connections-per-client <n>",
      `open connections per client address (IPv6: per /64) (0: no limit; default ${d.maxConnectionsPerClient}, a quarter of --max-connections)`,
      count,
    );
}

/** The server limits the flags set (unset ones keep their defaults). */
export function serverLimitsFromFlags(flags: ServerLimitFlags): Partial<ServerLimits> {
  return {
    maxRequestsInflight: flags.maxRequestsInflight,
    maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
    maxConnections: flags.maxConnections,
    maxConnectionsPerClient: flags.maxConnectionsPerClient,
  };
}
