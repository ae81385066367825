// `virtualcluster agent --data-dir DIR`: runs a connected cluster's agent in the foreground (what
// `virtualcluster cluster connect` prepared in DIR) until SIGINT/SIGTERM: the tunnel to the platform, the spaces and
// virtual clusters it keeps on the host, and its direct endpoint. The modules load only when the command runs.

import { Command } from "commander";
import { ensureRuntimeNodeFlags } from "../virtualcluster/runtime-node-flags.ts";
import { addLogOptions, commandLogger, type LogFlags } from "./log-options.ts";
import { PROGRAM } from "./program.ts";
import { runAction } from "./run-action.ts";
import { stopOnSignal } from "./stop-on-signal.ts";

export const DEFAULT_AGENT_DATA_DIR = "./virtualcluster-agent-data";

interface AgentFlags extends LogFlags {
  dataDir: string;
}

export function agentCommand(): Command {
  const command = new Command("agent")
    .description(
      "Run a connected cluster's agent: its tunnel to the platform, spaces, virtual clusters, direct endpoint",
    )
    .option(
      "--data-dir <dir>",
      "the agent's data directory (written by virtualcluster cluster connect)",
      DEFAULT_AGENT_DATA_DIR,
    );
  return addLogOptions(command)
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster cluster connect prod --host-kubeconfig prod-admin.kubeconfig --data-dir /var/lib/vcp-agent --no-start\n" +
        "  virtualcluster agent --data-dir /var/lib/vcp-agent",
    )
    .action(
      runAction(async (flags: AgentFlags) => {
        // The runtime's memory settings (a small young generation, one malloc arena), so the agent stays small.
        ensureRuntimeNodeFlags();
        const [logger, { readAgentConfig }, { startAgent }] = await Promise.all([
          commandLogger(flags),
          import("../agent/agent-config.ts"),
          import("../agent/agent.ts"),
        ]);
        const loaded = await readAgentConfig(flags.dataDir);
        const agent = await startAgent({ ...loaded, dataDir: flags.dataDir, program: PROGRAM, logger });
        stopOnSignal(logger, () => agent.close());
        const direct = agent.directEndpoint ? `Direct endpoint: ${agent.directEndpoint.url}\n` : "";
        process.stdout.write(
          `Agent of cluster ${loaded.config.cluster} started; connecting to ${loaded.config.platforms.join(", ")}\n${direct}`,
        );
      }),
    );
}
