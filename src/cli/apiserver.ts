// `virtualcluster apiserver`: a stand-alone Kubernetes-compatible API server (core/v1 + rbac.authorization.k8s.io/v1)
// with embedded storage — a host cluster for machines without Kubernetes, and the host in end-to-end tests. Runs
// until SIGINT/SIGTERM. The server modules load only when the command runs, so other commands start quickly.

import { Command, InvalidArgumentError } from "commander";
import { addLogOptions, commandLogger, type LogFlags } from "./log-options.ts";
import { runAction } from "./run-action.ts";
import { addServerLimitOptions, type ServerLimitFlags, serverLimitsFromFlags } from "./server-limit-options.ts";
import { stopOnSignal } from "./stop-on-signal.ts";

export const DEFAULT_APISERVER_DATA_DIR = "./virtualcluster-apiserver-data";

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("must be a port number (0-65535)");
  return n;
}

interface ApiServerOptions extends ServerLimitFlags, LogFlags {
  dataDir: string;
  host: string;
  port: number;
  name: string;
}

export function apiserverCommand(): Command {
  const command = new Command("apiserver")
    .description("Run a stand-alone Kubernetes API server (core/v1 and rbac) with storage in --data-dir")
    .option(
      "--data-dir <dir>",
      "data directory (storage, certificates, admin token, admin.kubeconfig)",
      DEFAULT_APISERVER_DATA_DIR,
    )
    .option("--host <host>", "address to listen on and to put in certificates and the kubeconfig", "127.0.0.1")
    .option("--port <port>", "port to listen on (0: any free port)", port, 6443)
    .option("--name <name>", "cluster and context name in admin.kubeconfig", "virtualcluster-apiserver");
  return addLogOptions(addServerLimitOptions(command))
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster apiserver\n  virtualcluster apiserver --data-dir /var/lib/host-cluster --port 7443\n" +
        "  kubectl --kubeconfig ./virtualcluster-apiserver-data/admin.kubeconfig get namespaces",
    )
    .action(
      runAction(async (opts: ApiServerOptions) => {
        const [logger, { startClusterApiServer }] = await Promise.all([
          commandLogger(opts),
          import("../cluster-apiserver/cluster-api-server.ts"),
        ]);
        const running = await startClusterApiServer({
          dataDir: opts.dataDir,
          host: opts.host,
          port: opts.port,
          name: opts.name,
          limits: serverLimitsFromFlags(opts),
          logger,
        });
        // Before the line that says it is up: whoever reads it may stop it at once.
        stopOnSignal(logger, () => running.close());
        process.stdout.write(
          `API server listening on ${running.url}\n` +
            `Admin kubeconfig: ${running.kubeconfigPath}\n` +
            `Try: kubectl --kubeconfig ${running.kubeconfigPath} get namespaces\n`,
        );
      }),
    );
}
