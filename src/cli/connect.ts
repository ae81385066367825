// `virtualcluster connect NAME [--project P]`: a kubeconfig for a virtual cluster through the platform (the
// instance's kubeconfig subresource: a new access key scoped to that virtual cluster, or with --client-cert a client
// certificate from the instance's CA), merged into the user's kubeconfig and made current, or printed with --print.

import { Command } from "commander";
import { readClientConfig, requireLogin } from "./client-config.ts";
import { mergeKubeconfig, readKubeconfigFile, targetKubeconfig, writeKubeconfigFile } from "./kubeconfig-merge.ts";
import { CommandError } from "./patches-io.ts";
import { API_GROUP_PATH, PlatformClient } from "./platform-client.ts";
import {
  checkLogin,
  findInstances,
  GROUP_VERSION,
  getInstance,
  type InstanceObject,
  projectNamespace,
} from "./platform-registration.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

interface ConnectFlags {
  project?: string;
  print?: boolean;
  clientCert?: boolean;
  kubeconfig?: string;
}

async function findInstance(
  client: PlatformClient,
  name: string,
  prefix: string,
  project: string | undefined,
): Promise<InstanceObject> {
  if (project !== undefined) {
    const instance = await getInstance(client, `${prefix}${project}`, name);
    if (!instance) throw new CommandError(`virtual cluster ${name} not found in project ${project}`);
    return instance;
  }
  const found = await findInstances(client, name);
  if (found.length === 0) {
    throw new CommandError(`virtual cluster ${name} not found on the platform ${client.login.host}`);
  }
  if (found.length > 1) {
    const projects = found.map((instance) => instance.metadata.namespace.slice(prefix.length)).sort();
    throw new CommandError(`virtual cluster ${name} exists in projects ${projects.join(", ")}: pass --project`);
  }
  return found[0];
}

async function connect(name: string, flags: ConnectFlags): Promise<void> {
  const client = new PlatformClient(requireLogin(readClientConfig()));
  const self = await withSpinner(`Checking the login to ${client.login.host}`, () => checkLogin(client));
  const prefix = projectNamespace(self, "");
  const instance = await withSpinner(`Looking up virtual cluster ${name}`, () =>
    findInstance(client, name, prefix, flags.project),
  );
  const { namespace } = instance.metadata;
  const project = namespace.slice(prefix.length);
  const ingress = instance.spec?.template?.accessPoint?.ingress;
  if (!ingress?.enabled || !ingress.host) {
    throw new CommandError(
      `virtual cluster ${name} in project ${project} has not connected to the platform yet, so its address is unknown (is it running? see \`virtualcluster list\`)`,
    );
  }
  const style = styles(colorEnabled(process.stderr));
  if (instance.status?.online === false) {
    const since = instance.status.lastHeartbeatTime ? ` (last heartbeat ${instance.status.lastHeartbeatTime})` : "";
    process.stderr.write(`${style.yellow("Warning:")} virtual cluster ${name} is offline${since}\n`);
  }
  const reply = await withSpinner("Requesting a kubeconfig", () =>
    client.request<{ status?: { kubeConfig?: string } }>(
      "POST",
      `${API_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/virtualclusterinstances/${encodeURIComponent(name)}/kubeconfig`,
      {
        body: {
          apiVersion: GROUP_VERSION,
          kind: "VirtualClusterInstanceKubeConfig",
          spec: flags.clientCert ? { clientCert: true } : {},
        },
      },
    ),
  );
  const kubeConfig = reply.status?.kubeConfig;
  if (!kubeConfig) throw new CommandError("the platform returned no kubeconfig");
  if (flags.print) {
    process.stdout.write(kubeConfig.endsWith("\n") ? kubeConfig : `${kubeConfig}\n`);
    return;
  }
  const file = targetKubeconfig(flags.kubeconfig);
  const merged = mergeKubeconfig(readKubeconfigFile(file), kubeConfig, file);
  writeKubeconfigFile(file, merged.text);
  process.stdout.write(
    `${style.green("Switched")} to context "${merged.context}" (virtual cluster ${name}, project ${project}, ${merged.server}) in ${file}\n`,
  );
}

export function connectCommand(): Command {
  return new Command("connect")
    .description("Get a kubeconfig for a virtual cluster through the platform and switch to it")
    .argument("<name>", "virtual cluster name (as registered on the platform)")
    .option("--project <project>", "project of the virtual cluster (default: look in every project you can see)")
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

Needs a login (virtualcluster platform login). The credentials are valid for one day.`,
    )
    .action(runAction((name: string, flags: ConnectFlags) => connect(name, flags)));
}
