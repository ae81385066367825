// `virtualcluster pause NAME [-n NS]`: stops a virtual cluster running in the background and keeps its data;
// `virtualcluster resume` starts it again.

import { Command } from "commander";
import { namespaceOf } from "../virtualcluster/lifecycle/local-clusters.ts";
import { pauseVirtualCluster } from "../virtualcluster/lifecycle/pause-virtual-cluster.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

export function pauseCommand(): Command {
  return new Command("pause")
    .description("Stop a virtual cluster running on this machine and keep its data (resume starts it again)")
    .argument("<name>", "virtual cluster name")
    .option("-n, --namespace <namespace>", "host namespace of the virtual cluster (default: the only one with NAME)")
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster pause dev
  virtualcluster pause dev -n team-a

Kept: the virtual cluster's store, certificates and settings on this machine, its objects on the host cluster and
its instance on the platform (which shows it offline). Nothing is synced while it is paused.`,
    )
    .action(
      runAction(async (name: string, flags: { namespace?: string }) => {
        const namespace = namespaceOf(name, flags.namespace);
        const { stopped } = await pauseVirtualCluster({ name, namespace, step: withSpinner });
        const style = styles(colorEnabled(process.stdout));
        process.stdout.write(
          `${style.green("Paused")} virtual cluster ${name} in namespace ${namespace}${stopped ? "" : " (it was not running)"}; resume it with: virtualcluster resume ${name} -n ${namespace}\n`,
        );
      }),
    );
}
