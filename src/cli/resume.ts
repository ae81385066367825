// `virtualcluster resume NAME [-n NS]`: starts a paused (or stopped) virtual cluster again and waits until it is ready.

import { Command } from "commander";
import { clusterPaths, namespaceOf } from "../virtualcluster/lifecycle/local-clusters.ts";
import { resumeVirtualCluster } from "../virtualcluster/lifecycle/resume-virtual-cluster.ts";
import { parseDuration } from "./duration.ts";
import { PROGRAM } from "./program.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles, withProgress } from "./terminal.ts";

export function resumeCommand(): Command {
  return new Command("resume")
    .description("Start a paused virtual cluster on this machine again, with its data")
    .argument("<name>", "virtual cluster name")
    .option("-n, --namespace <namespace>", "host namespace of the virtual cluster (default: the only one with NAME)")
    .option("--timeout <duration>", "how long to wait until the virtual cluster is ready (default: 2m)", parseDuration)
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster resume dev\n  virtualcluster resume dev -n team-a --timeout 5m",
    )
    .action(
      runAction(async (name: string, flags: { namespace?: string; timeout?: number }) => {
        const namespace = namespaceOf(name, flags.namespace);
        const result = await resumeVirtualCluster({
          name,
          namespace,
          program: PROGRAM,
          timeoutMs: (flags.timeout ?? 120) * 1000,
          step: withProgress,
        });
        const style = styles(colorEnabled(process.stdout));
        const url = result.status?.url ?? "";
        process.stdout.write(
          result.alreadyRunning
            ? `Virtual cluster ${name} in namespace ${namespace} is already running: ${url}\n`
            : `${style.green("Resumed")} virtual cluster ${name} in namespace ${namespace}: ${url}\n` +
                `Logs: ${clusterPaths(namespace, name).log}\n`,
        );
      }),
    );
}
