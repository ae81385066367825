// `virtualcluster list`: the virtual clusters this machine runs, from their directories under
// ~/.virtualcluster/clusters: running or stopped (from the PID), URL, platform connection (from the status file the
// runtime writes every few seconds), sync errors and age. No cluster or platform is contacted. Errors are cut to
// their column in the table, and whole in -o wide, yaml and json.

import { Command, Option } from "commander";
import { humanDuration } from "../http/table.ts";
import { runtimePid } from "../virtualcluster/lifecycle/cluster-runtime.ts";
import { clusterPaths, type LocalCluster, listLocalClusters } from "../virtualcluster/lifecycle/local-clusters.ts";
import { runtimeContainerName } from "../virtualcluster/lifecycle/runtime-container.ts";
import { readRuntimeStatus } from "../virtualcluster/runtime-status.ts";
import { formatData, renderTable, type ServerTable } from "./output.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles } from "./terminal.ts";

export const LIST_FORMATS = ["table", "wide", "yaml", "json"] as const;

/** Longest error shown in a table cell (-o wide shows it whole). */
export const ERROR_CELL_WIDTH = 50;

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
  /** Objects whose last sync failed or that were stopped as not converging (running clusters only). */
  syncErrors?: number;
  lastSyncError?: { object: string; message: string; time: string };
  hostServer: string;
  kubeconfig: string;
  log: string;
  /** When it runs in a container: its name and image. */
  container?: { name: string; image: string };
}

export function describeCluster(state: LocalCluster): ListedCluster {
  const paths = clusterPaths(state.namespace, state.name);
  const pid = runtimePid(state, paths);
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
  if (state.container) listed.container = { name: runtimeContainerName(state, paths), image: state.container.image };
  // A stopped runtime's last status says nothing about now.
  if (pid !== undefined && status?.platform) {
    const { connected, error, platform, instance, lastHeartbeat } = status.platform;
    listed.platform = { connected, error, platform, instance, lastHeartbeat };
  }
  if (pid !== undefined && status?.syncer) {
    // Failing syncs, and objects stopped because their patches do not converge.
    listed.syncErrors = (status.syncer.failing ?? 0) + (status.syncer.stalled ?? 0);
    const last = status.syncer.lastError;
    if (last) listed.lastSyncError = { object: last.key, message: last.message, time: last.time };
  }
  return listed;
}

/** An error cut to its column: the first ERROR_CELL_WIDTH characters and an ellipsis. */
export function cutError(text: string): string {
  return text.length <= ERROR_CELL_WIDTH ? text : `${text.slice(0, ERROR_CELL_WIDTH - 1)}…`;
}

function platformCell(cluster: ListedCluster, wide: boolean): string {
  const platform = cluster.platform;
  if (!platform) return "-";
  if (platform.connected) return `connected (${platform.instance?.namespace}/${platform.instance?.name})`;
  const error = platform.error ?? "not connected";
  return wide ? error : cutError(error);
}

function lastErrorCell(cluster: ListedCluster): string {
  const last = cluster.lastSyncError;
  return last ? `${last.object}: ${last.message}` : "-";
}

/** The table `list` prints (kubectl-style columns, ages relative to `now`); `wide` adds the last sync error. */
export function clusterTable(clusters: ListedCluster[], now: number = Date.now(), wide = false): ServerTable {
  const names = ["Name", "Namespace", "Status", "URL", "Platform", "Sync Errors", "Age"];
  return {
    columnDefinitions: [...names.map((name) => ({ name })), { name: "Last Sync Error", priority: 1 }],
    rows: clusters.map((cluster) => ({
      cells: [
        cluster.name,
        cluster.namespace,
        cluster.status,
        cluster.url,
        platformCell(cluster, wide),
        cluster.syncErrors === undefined ? "-" : String(cluster.syncErrors),
        humanDuration(now - Date.parse(cluster.created)),
        lastErrorCell(cluster),
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
  virtualcluster list -o wide      # with the last sync error, errors whole
  virtualcluster list -o json`,
    )
    .action(
      runAction(async (flags: { output: (typeof LIST_FORMATS)[number] }) => {
        const clusters = listLocalClusters().map(describeCluster);
        if (flags.output === "yaml" || flags.output === "json") {
          process.stdout.write(formatData({ items: clusters }, flags.output));
          return;
        }
        if (clusters.length === 0) {
          process.stderr.write(
            "No virtual clusters found. Create one with `virtualcluster create NAME -n NAMESPACE`.\n",
          );
          return;
        }
        const wide = flags.output === "wide";
        process.stdout.write(
          renderTable(clusterTable(clusters, Date.now(), wide), {
            wide,
            header: styles(colorEnabled(process.stdout)).bold,
          }),
        );
      }),
    );
}
