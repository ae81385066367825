// `virtualcluster create NAME -n NS [-f virtualcluster.yaml] [--upgrade]`: applies a virtual cluster to a host
// cluster and runs it on this machine. The work is in create-action.ts, loaded only when the command runs.

import { Command, InvalidArgumentError } from "commander";
import { parseDuration } from "./duration.ts";
import { runAction } from "./run-action.ts";

export interface CreateFlags {
  namespace: string;
  file?: string;
  upgrade?: boolean;
  resetSettings?: boolean;
  project?: string;
  hostKubeconfig?: string;
  port?: number;
  /** --container: true; --no-container: false; neither: as before. */
  container?: boolean;
  containerImage?: string;
  /** Seconds; 120 when not given. */
  timeout?: number;
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535) throw new InvalidArgumentError("must be a port number (1-65535)");
  return n;
}

export function createCommand(): Command {
  return new Command("create")
    .description("Create (or with --upgrade update) a virtual cluster on a host cluster and run it on this machine")
    .argument("<name>", "virtual cluster name")
    .requiredOption("-n, --namespace <namespace>", "host namespace of the virtual cluster (created when missing)")
    .option("-f, --file <file>", "settings file (virtualcluster.yaml); default: no settings")
    .option("--upgrade", "apply new settings to an existing virtual cluster and restart it (creates it when missing)")
    .option("--reset-settings", "with --upgrade and no -f: drop the stored settings (without it they are kept)")
    .option("--project <project>", "platform project to register the virtual cluster in (default: default)")
    .option("--host-kubeconfig <file>", "kubeconfig of the host cluster (default: the current context)")
    .option("--port <port>", "port of the virtual cluster's API (default: a free port, kept across upgrades)", port)
    .option("--timeout <duration>", "how long to wait until the virtual cluster is ready (default: 2m)", parseDuration)
    .option("--container", "run the virtual cluster's control plane in a container (podman) instead of a process")
    .option("--no-container", "with --upgrade: run it as a process again")
    .option(
      "--container-image <image>",
      "image for --container (default: localhost/virtualcluster-platform:VERSION, from `npm run image`)",
    )
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster create dev -n team-a -f virtualcluster.yaml
  virtualcluster create dev -n team-a -f virtualcluster.yaml --upgrade
  virtualcluster create dev -n team-a --upgrade                     # restart with the stored settings
  virtualcluster create dev -n team-a --host-kubeconfig ./host-data/admin.kubeconfig --project web
  virtualcluster create dev -n team-a -f virtualcluster.yaml --container   # its control plane in a container

The settings are checked first and stored in the host namespace (Secret vc-config-NAME). When you are logged in to
a platform (virtualcluster platform login) and the settings set no external.platform.apiKey, the virtual cluster is
registered in the project with a dedicated access key, kept in the Secret virtualcluster-platform-api-key of the
host namespace. The virtual cluster runs in the background; its data, log and PID are in
~/.virtualcluster/clusters/NAMESPACE/NAME (VIRTUALCLUSTER_HOME relocates ~/.virtualcluster).
With --container it runs in a podman container on the host's network, with a read-only root and that directory
mounted; --upgrade keeps the choice until --container or --no-container changes it.`,
    )
    .action(
      runAction(async (name: string, flags: CreateFlags) => {
        const { createCommandAction } = await import("./create-action.ts");
        await createCommandAction(name, flags);
      }),
    );
}
