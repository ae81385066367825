// `virtualcluster connect NAME [--project P]`: a kubeconfig for a virtual cluster through the platform (the
// instance's kubeconfig subresource: a new access key scoped to that virtual cluster, or with --client-cert a client
// certificate from the instance's CA), merged into the user's kubeconfig and made current, or printed with --print.
// `virtualcluster connect cluster NAME [--direct]`: the same for a connected host cluster (cluster-kubeconfig.ts).

import { resolve } from "node:path";
import { Command } from "commander";
import { requestInstanceKubeconfig } from "../virtualcluster/lifecycle/instance-kubeconfig.ts";
import { CommandError } from "./command-error.ts";
import { rememberConnectedContext } from "./connected-contexts.ts";
import {
  currentContext,
  mergeKubeconfig,
  readKubeconfigFile,
  targetKubeconfig,
  writeKubeconfigFile,
} from "./kubeconfig-merge.ts";
import { loggedInClient } from "./platform-session.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

interface ConnectFlags {
  direct?: boolean;
  ttl?: number;
  project?: string;
  namespace?: string;
  print?: boolean;
  clientCert?: boolean;
  kubeconfig?: string;
}

async function connect(name: string, flags: ConnectFlags): Promise<void> {
  const style = styles(colorEnabled(process.stderr));
  const client = loggedInClient();
  const { kubeConfig, project, instance } = await requestInstanceKubeconfig({
    name,
    project: flags.project,
    namespace: flags.namespace,
    clientCert: flags.clientCert,
    platform: client,
    step: withSpinner,
    onOffline: (instance) => {
      const heartbeat = instance.status?.lastHeartbeatTime;
      const since = heartbeat ? ` (last heartbeat ${heartbeat})` : "";
      process.stderr.write(`${style.yellow("Warning:")} virtual cluster ${name} is offline${since}\n`);
    },
  });
  if (flags.print) {
    process.stdout.write(kubeConfig.endsWith("\n") ? kubeConfig : `${kubeConfig}\n`);
    return;
  }
  const file = targetKubeconfig(flags.kubeconfig);
  const existing = readKubeconfigFile(file);
  const merged = mergeKubeconfig(existing, kubeConfig, file);
  writeKubeconfigFile(file, merged.text);
  // So that `delete` can remove the context again and switch back.
  rememberConnectedContext({
    file: resolve(file),
    context: merged.context,
    previous: currentContext(existing),
    platform: client.login.host,
    instance,
  });
  process.stdout.write(
    `${style.green("Switched")} to context "${merged.context}" (virtual cluster ${name}, project ${project}, ${merged.server}) in ${file}\n`,
  );
}

/** Writes (or prints) a kubeconfig and makes its context current. */
function useKubeconfig(
  kubeConfig: string,
  flags: ConnectFlags,
): { context: string; server: string; file: string } | undefined {
  if (flags.print) {
    process.stdout.write(kubeConfig.endsWith("\n") ? kubeConfig : `${kubeConfig}\n`);
    return undefined;
  }
  const file = targetKubeconfig(flags.kubeconfig);
  const merged = mergeKubeconfig(readKubeconfigFile(file), kubeConfig, file);
  writeKubeconfigFile(file, merged.text);
  return { context: merged.context, server: merged.server, file };
}

async function connectCluster(name: string, flags: ConnectFlags): Promise<void> {
  const style = styles(colorEnabled(process.stderr));
  const { requestClusterKubeconfig } = await import("../agent/cluster-kubeconfig.ts");
  const result = await requestClusterKubeconfig({
    name,
    platform: loggedInClient(),
    direct: flags.direct,
    ttlSeconds: flags.ttl ?? (flags.direct ? 3600 : 86_400),
    step: withSpinner,
  });
  if (!result.online) process.stderr.write(`${style.yellow("Warning:")} cluster ${name} is offline\n`);
  const used = useKubeconfig(result.kubeConfig, flags);
  if (!used) return;
  const how = flags.direct ? "direct endpoint" : "through the platform";
  process.stdout.write(
    `${style.green("Switched")} to context "${used.context}" (cluster ${name}, ${how}, ${used.server}) in ${used.file}\n`,
  );
}

export function connectCommand(): Command {
  return new Command("connect")
    .description("Get a kubeconfig for a virtual cluster (or with `cluster NAME` a connected cluster) and switch to it")
    .argument("<name>", 'virtual cluster name (as registered on the platform), or "cluster" followed by a cluster name')
    .argument("[cluster]", "with `connect cluster`: the connected cluster's name")
    .option("--direct", "with `connect cluster`: use the cluster's direct endpoint and a direct cluster endpoint token")
    .option(
      "--ttl <seconds>",
      "with `connect cluster`: life of the credential (default: 1 day, 1 hour with --direct)",
      Number,
    )
    .option("--project <project>", "project of the virtual cluster (default: look in every project you can see)")
    .option(
      "-n, --namespace <namespace>",
      "host namespace of the virtual cluster (when its name is in several projects)",
    )
    .option("--print", "print the kubeconfig instead of changing your kubeconfig")
    .option("--client-cert", "use a client certificate instead of an access key scoped to the virtual cluster")
    .option("--kubeconfig <file>", "kubeconfig file to change (default: the first of KUBECONFIG, or ~/.kube/config)")
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster connect dev --project default
  virtualcluster connect dev --print > dev.kubeconfig
  virtualcluster connect dev --client-cert --kubeconfig ./dev.kubeconfig
  virtualcluster connect cluster prod
  virtualcluster connect cluster prod --direct --ttl 3600

Needs a login (virtualcluster platform login). The credentials are valid for one day. \`virtualcluster delete\`
removes the context again and makes the one that was current before current again.`,
    )
    .action(
      runAction((name: string, cluster: string | undefined, flags: ConnectFlags) => {
        if (cluster !== undefined && name !== "cluster") {
          throw new CommandError([
            `unexpected argument "${cluster}": did you mean virtualcluster connect cluster ${cluster}?`,
          ]);
        }
        return cluster !== undefined ? connectCluster(cluster, flags) : connect(name, flags);
      }),
    );
}
