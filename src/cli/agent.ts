// `virtualcluster agent --data-dir DIR`: runs a connected cluster's agent in the foreground (what
// `virtualcluster cluster connect` prepared in DIR) until SIGINT/SIGTERM: the tunnel to the platform, the spaces and
// virtual clusters it keeps on the host, and its direct endpoint. The modules load only when the command runs.

import { Command, Option } from "commander";
import { addLogOptions, commandLogger, type LogFlags } from "./log-options.ts";
import { PROGRAM } from "./program.ts";
import { runAction } from "./run-action.ts";
import { stopOnSignal } from "./stop-on-signal.ts";

export const DEFAULT_AGENT_DATA_DIR = "./virtualcluster-agent-data";

interface AgentFlags extends LogFlags {
  dataDir: string;
  runtime: "auto" | "process" | "container";
  containerImage?: string;
  helmBinary?: string;
  prometheusBinary?: string;
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
    )
    .addOption(
      new Option(
        "--runtime <how>",
        "how placed virtual clusters run: child processes, podman containers of the image, or containers when podman and the image are here (auto)",
      )
        .choices(["process", "container", "auto"])
        .default("process"),
    )
    .option("--container-image <image>", "the image of their containers (default: the one `npm run image` builds)")
    .option(
      "--prometheus-binary <file>",
      "the Prometheus the cluster's metrics run in while the platform's cost control is on (default: prometheus on PATH)",
    )
    .option(
      "--helm-binary <file>",
      "the helm that installs apps (HelmRelease) into virtual clusters and spaces (default: helm on PATH; without one the console shows users the helm command)",
    );
  return addLogOptions(command)
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster cluster connect prod --host-kubeconfig prod-admin.kubeconfig --data-dir /var/lib/vcp-agent --no-start\n" +
        "  virtualcluster agent --data-dir /var/lib/vcp-agent",
    )
    .action(
      runAction(async (flags: AgentFlags) => {
        const [
          logger,
          { readAgentConfig },
          { startAgent },
          { chooseRuntimeContainer },
          { defaultRuntimeImage },
          { findHelm },
        ] = await Promise.all([
          commandLogger(flags),
          import("../agent/agent-config.ts"),
          import("../agent/agent.ts"),
          import("../agent/runtime-launch.ts"),
          import("../virtualcluster/lifecycle/runtime-container.ts"),
          import("../agent/helm.ts"),
        ]);
        const loaded = await readAgentConfig(flags.dataDir);
        const image = flags.containerImage ?? defaultRuntimeImage();
        const runtimeContainer = await chooseRuntimeContainer(flags.runtime, image);
        const { helm, problem } = await findHelm(flags.helmBinary);
        if (problem && flags.helmBinary) throw new Error(`--helm-binary ${flags.helmBinary}: ${problem}`);
        const agent = await startAgent({
          ...loaded,
          dataDir: flags.dataDir,
          program: PROGRAM,
          runtimeContainer,
          helm,
          prometheusBinary: flags.prometheusBinary,
          logger,
        });
        stopOnSignal(logger, () => agent.close());
        const direct = agent.directEndpoint ? `Direct endpoint: ${agent.directEndpoint.url}\n` : "";
        const runs = runtimeContainer ? `in containers of ${runtimeContainer.image}` : "as processes";
        process.stdout.write(
          `Agent of cluster ${loaded.config.cluster} started; connecting to ${loaded.config.platforms.join(", ")}\n${direct}` +
            `Virtual clusters placed here run ${runs}\n` +
            (helm
              ? `Apps are installed with helm ${helm.version}\n`
              : "No helm here: users are shown the helm command for apps\n"),
        );
      }),
    );
}
