// A cluster connected as a user does it: `virtualcluster platform login` into a home of the test's own, then
// `virtualcluster cluster connect NAME --no-start` (direct endpoint on a free loopback port, so tests in parallel
// never meet on 9443) and the agent started with the given flags.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AgentProcess, startAgentProcess } from "./agent-process.ts";
import { runCli } from "./cli-run.ts";
import type { PlatformProcess } from "./platform-process.ts";

/** The environment of a CLI logged in to `platform` as the admin (its home under `root`). */
export async function adminCliEnv(root: string, platform: PlatformProcess): Promise<NodeJS.ProcessEnv> {
  const env = { ...process.env, VIRTUALCLUSTER_HOME: join(root, "home") };
  const caFile = join(root, "platform-ca.pem");
  await writeFile(caFile, platform.caPem);
  const login = await runCli(
    ["platform", "login", platform.url, "--ca-file", caFile, "--access-key", platform.adminKey],
    { env },
  );
  assert.equal(login.code, 0, login.stderr);
  return env;
}

export async function connectTestCluster(options: {
  env: NodeJS.ProcessEnv;
  name: string;
  hostKubeconfig: string;
  dataDir: string;
  /** The agent's own environment and flags. */
  agentEnv?: NodeJS.ProcessEnv;
  agentArgs?: string[];
}): Promise<AgentProcess> {
  const connected = await runCli(
    [
      "cluster",
      "connect",
      options.name,
      "--host-kubeconfig",
      options.hostKubeconfig,
      "--data-dir",
      options.dataDir,
    ].concat(["--direct-host", "127.0.0.1", "--direct-port", "0", "--no-start"]),
    { env: options.env },
  );
  assert.equal(connected.code, 0, connected.stderr);
  return startAgentProcess(options.dataDir, options.agentEnv ?? process.env, undefined, options.agentArgs ?? []);
}
