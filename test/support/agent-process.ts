// Starts the real cluster agent (`virtualcluster agent --data-dir DIR`) as a child process and hands tests its
// output, its direct endpoint and ways to stop it (gracefully, or with SIGKILL as a crash would).

import { type ChildProcess, spawn } from "node:child_process";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

export interface AgentProcess {
  child: ChildProcess;
  /** The direct endpoint's URL, when it serves one. */
  directUrl?: string;
  output(): string;
  /** SIGTERM (or the given signal) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startAgentProcess(
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
  /** Another entry script (the installed dist/cli/main.js). */
  main = MAIN,
): Promise<AgentProcess> {
  const child = spawn(process.execPath, [main, "agent", "--data-dir", dataDir], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...env, LOG_LEVEL: "info" },
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the agent did not start in time:\n${output}`)), 30_000);
    const check = () => {
      if (/Agent of cluster \S+ started/.test(output)) {
        clearTimeout(timer);
        child.stdout?.off("data", check);
        resolve();
      }
    };
    child.stdout?.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the agent exited with ${code}:\n${output}`));
    });
  });
  const direct = /Direct endpoint: (https:\/\/\S+)/.exec(output);
  return {
    child,
    directUrl: direct?.[1],
    output: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await exited;
    },
  };
}
