// `virtualcluster connect NAME [--project P]`: a kubeconfig for a virtual cluster through the platform (the
// instance's kubeconfig subresource: a new access key scoped to that virtual cluster, or with --client-cert a client
// certificate from the instance's CA), merged into the user's kubeconfig and made current, or printed with --print.

import { resolve } from "node:path";
import { Command } from "commander";
import { requestInstanceKubeconfig } from "../virtualcluster/lifecycle/instance-kubeconfig.ts";
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

export function connectCommand(): Command {
  return new Command("connect")
    .description("Get a kubeconfig for a virtual cluster through the platform and switch to it")
    .argument("<name>", "virtual cluster name (as registered on the platform)")
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

Needs a login (virtualcluster platform login). The credentials are valid for one day. \`virtualcluster delete\`
removes the context again and makes the one that was current before current again.`,
    )
    .action(runAction((name: string, flags: ConnectFlags) => connect(name, flags)));
}
