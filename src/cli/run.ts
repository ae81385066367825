// `virtualcluster run`: runs one virtual cluster in the foreground — its API server, the syncer into the host
// namespace, and the platform connection when the settings ask for one — until SIGINT/SIGTERM.
// `virtualcluster create` starts this command in the background; people and tests can run it directly.

import { Command, InvalidArgumentError } from "commander";
import { readSettingsFile } from "../virtualcluster/settings/load.ts";
import { addLogOptions, commandLogger, type LogFlags } from "./log-options.ts";
import { runAction } from "./run-action.ts";
import { stopOnSignal } from "./stop-on-signal.ts";

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("must be a port number (0-65535)");
  return n;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError("must be a whole number of seconds (1 or more)");
  return n;
}

interface RunOptions extends LogFlags {
  name: string;
  namespace: string;
  file: string;
  hostKubeconfig?: string;
  dataDir?: string;
  host: string;
  port: number;
  heartbeatSeconds?: number;
}

export function runCommand(): Command {
  const command = new Command("run")
    .description("Run a virtual cluster in the foreground: its API server, the syncer and the platform connection")
    .requiredOption("--name <name>", "virtual cluster name")
    .requiredOption("-n, --namespace <namespace>", "host namespace the virtual cluster syncs into")
    .requiredOption("-f, --file <file>", "settings file (virtualcluster.yaml)")
    .option("--host-kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG or ~/.kube/config)")
    .option("--data-dir <dir>", "data directory (storage, certificates, admin.kubeconfig, status.json)")
    .option("--host <host>", "address to listen on and to put in certificates and kubeconfigs", "127.0.0.1")
    .option("--port <port>", "port of the virtual cluster's API (0: any free port)", port, 0)
    .option("--heartbeat-seconds <seconds>", "how often to report to the platform and re-read the access key", seconds);
  return addLogOptions(command)
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  virtualcluster run --name dev -n team-a -f virtualcluster.yaml --host-kubeconfig host.kubeconfig\n" +
        "  virtualcluster run --name dev -n team-a -f virtualcluster.yaml --data-dir ./dev-data --port 9443\n" +
        "\nThe access key for the platform comes from the environment variable LICENSE or the Secret the settings name.",
    )
    .action(
      runAction(async (opts: RunOptions) => {
        const settingsText = readSettingsFile(opts.file);
        const [logger, { loadKubeAccess }, { startRuntime }] = await Promise.all([
          commandLogger(opts),
          import("../virtualcluster/kube/kube-access.ts"),
          import("../virtualcluster/runtime.ts"),
        ]);
        const host = await loadKubeAccess({ file: opts.hostKubeconfig });
        const runtime = await startRuntime({
          name: opts.name,
          namespace: opts.namespace,
          settingsText,
          host,
          dataDir: opts.dataDir ?? `./virtualcluster-${opts.name}-data`,
          listenHost: opts.host,
          port: opts.port,
          heartbeatIntervalMs: opts.heartbeatSeconds ? opts.heartbeatSeconds * 1000 : undefined,
          logger,
        });
        const platform = runtime.status().platform;
        // Before the line that says it is up: whoever reads it may stop it at once.
        stopOnSignal(logger, () => runtime.close());
        process.stdout.write(
          `Virtual cluster ${opts.name} listening on ${runtime.url}\n` +
            `admin kubeconfig: ${runtime.kubeconfigPath}\n` +
            (platform
              ? platform.connected
                ? `platform: connected to ${platform.platform} as ${platform.instance?.namespace}/${platform.instance?.name}\n`
                : `platform: not connected: ${platform.error}\n`
              : ""),
        );
      }),
    );
}
