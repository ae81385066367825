// The platform under test: a child process (test/support/platform-process.ts) on a fresh data directory, pinned to
// the server CPU, with an ApiClient for setup and checks.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PlatformProcess, startPlatformProcess } from "../../test/support/platform-process.ts";
import { ApiClient } from "./api.ts";
import { pinToCpu } from "./proc.ts";

export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

export interface BenchPlatform {
  process: PlatformProcess;
  pid: number;
  url: string;
  token: string;
  ca: string;
  api: ApiClient;
  /** Stops the server (SIGTERM); keeps the data directory when `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL, then waits for the exit. The data directory stays. */
  kill(): Promise<void>;
}

/**
 * Starts on `dataDir` (an existing one: a restart) or on a fresh directory; `main` runs another tree's
 * src/cli/main.ts (A/B runs against an earlier commit).
 */
export async function startBenchPlatform(dataDir?: string, options: { main?: string } = {}): Promise<BenchPlatform> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), "vcp-bench-")));
  // With an explicit data directory the helper never deletes it: stop() below decides.
  // Every load generator connects from 127.0.0.1: the per-client connection cap (a quarter of the total) would
  // count the watch scenario's 1,000 streams as one client's.
  const platform = await startPlatformProcess({
    dataDir: dir,
    main: options.main,
    extraArgs: ["--max-connections-per-client", "0"],
  });
  const pid = platform.child.pid!;
  pinToCpu(pid, SERVER_CPU);
  const api = new ApiClient(platform.url, platform.adminKey, platform.caPem);
  const exited = () =>
    platform.child.exitCode !== null || platform.child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => platform.child.once("exit", () => resolve()));
  return {
    process: platform,
    pid,
    url: platform.url,
    token: platform.adminKey,
    ca: platform.caPem,
    api,
    async stop(options = {}) {
      api.close();
      await platform.stop();
      if (!options.keepData) await rm(dir, { recursive: true, force: true });
    },
    async kill() {
      api.close();
      const done = exited();
      platform.child.kill("SIGKILL");
      await done;
    },
  };
}
