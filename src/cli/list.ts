// `virtualcluster list`: the virtual clusters this machine runs, from their directories under
// ~/.virtualcluster/clusters: running or stopped (from the PID), URL, platform connection (from the status file the
// runtime writes every few seconds) and age. No cluster or platform is contacted.

import { Command, Option } from "commander";
import { humanDuration } from "../http/table.ts";
import { clusterPaths, type LocalCluster, listLocalClusters } from "../virtualcluster/lifecycle/local-clusters.ts";
import { runningPid } from "../virtualcluster/lifecycle/local-runtime.ts";
import { readRuntimeStatus } from "../virtualcluster/runtime-status.ts";
import { formatData, renderTable, type ServerTable } from "./output.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles } from "./terminal.ts";

export const LIST_FORMATS = ["table", "yaml", "json"] as const;

/** One virtual cluster as `list -o yaml|json` prints it. */
export interface ListedCluster {
  name: string;
  namespace: string;
  /** paused: stopped by `virtualcluster pause`. */
  status: "running" | "stopped" | "paused";
  pid?: number;
  url: string;
  created: string;
  platform?: {
    connected: boolean;
    error?: string;
    platform?: string;
    instance?: { namespace: string; name: string };
    lastHeartbeat?: string;
  };
  hostServer: string;
  kubeconfig: string;
  log: string;
}

export function describeCluster(state: LocalCluster): ListedCluster {
  const paths = clusterPaths(state.namespace, state.name);
  const pid = runningPid(paths);
  const status = readRuntimeStatus(paths.dir);
  const listed: ListedCluster = {
    name: state.name,
    namespace: state.namespace,
    status: pid !== undefined ? "running" : state.paused ? "paused" : "stopped",
    url: status?.url ?? `https://${state.listenHost}:${state.port}`,
    created: state.created,
    hostServer: state.hostServer,
    kubeconfig: paths.adminKubeconfig,
    log: paths.log,
  };
  if (pid !== undefined) listed.pid = pid;
  // A stopped runtime's last status says nothing about now.
  if (pid !== undefined && status?.platform) {
    const { connected, error, platform, instance, lastHeartbeat } = status.platform;
    listed.platform = { connected, error, platform, instance, lastHeartbeat };
  }
  return listed;
}

function platformCell(cluster: ListedCluster): string {
  const platform = cluster.platform;
  if (!platform) return "-";
  if (platform.connected) return `connected (${platform.instance?.namespace}/${platform.instance?.name})`;
  return platform.error ?? "not connected";
}

/** The table `list` prints (kubectl-style columns, ages relative to `now`). */
export function clusterTable(clusters: ListedCluster[], now: number = Date.now()): ServerTable {
  return {
    columnDefinitions: ["Name", "Namespace", "Status", "URL", "Platform", "Age"].map((name) => ({ name })),
    rows: clusters.map((cluster) => ({
      cells: [
        cluster.name,
        cluster.namespace,
        cluster.status,
        cluster.url,
        platformCell(cluster),
        humanDuration(now - Date.parse(cluster.created)),
      ],
    })),
  };
}

export function listCommand(): Command {
  return new Command("list")
    .description("List the virtual clusters this machine runs")
    .addOption(new Option("-o, --output <format>", "output format").choices(LIST_FORMATS).default("table"))
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster list
  virtualcluster list -o json`,
    )
    .action(
      runAction(async (flags: { output: (typeof LIST_FORMATS)[number] }) => {
        const clusters = listLocalClusters().map(describeCluster);
        if (flags.output !== "table") {
          process.stdout.write(formatData({ items: clusters }, flags.output));
          return;
        }
        if (clusters.length === 0) {
          process.stderr.write(
            "No virtual clusters found. Create one with `virtualcluster create NAME -n NAMESPACE`.\n",
          );
          return;
        }
        process.stdout.write(
          renderTable(clusterTable(clusters), { header: styles(colorEnabled(process.stdout)).bold }),
        );
      }),
    );
}
