// `virtualcluster delete NAME -n NS`: stops the virtual cluster and removes what `create` made. The work is in
// delete-action.ts, loaded only when the command runs.

import { Command } from "commander";
import { runAction } from "./run-action.ts";

export interface DeleteFlags {
  namespace?: string;
  hostKubeconfig?: string;
}

export function deleteCommand(): Command {
  return new Command("delete")
    .description("Stop a virtual cluster and delete it from its host cluster, the platform and this machine")
    .argument("<name>", "virtual cluster name")
    .option("-n, --namespace <namespace>", "host namespace of the virtual cluster (default: the only one with NAME)")
    .option("--host-kubeconfig <file>", "kubeconfig of the host cluster (default: the one create used)")
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster delete dev
  virtualcluster delete dev -n team-a --host-kubeconfig ./host-data/admin.kubeconfig

Deleted: the background process and its data, the objects the virtual cluster synced into the host namespace, the
settings Secret, ServiceAccount, RBAC and API key Secret that create made, and, when you are logged in to its
platform, the virtual cluster's instance there with its dedicated access key, and the kube contexts
\`virtualcluster connect\` added for it (the context that was current before is current again). The namespace
itself is kept.`,
    )
    .action(
      runAction(async (name: string, flags: DeleteFlags) => {
        const { deleteCommandAction } = await import("./delete-action.ts");
        await deleteCommandAction(name, flags);
      }),
    );
}
