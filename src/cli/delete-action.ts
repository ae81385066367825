// `virtualcluster delete` once its options are parsed: runs the lifecycle (src/virtualcluster/lifecycle/) with a
// spinner per step, then says what was removed and what is left on a platform.

import { deleteVirtualCluster } from "../virtualcluster/lifecycle/delete-virtual-cluster.ts";
import { namespaceOf } from "../virtualcluster/lifecycle/local-clusters.ts";
import { readClientConfig } from "./client-config.ts";
import { removeConnectedContexts } from "./connected-contexts.ts";
import type { DeleteFlags } from "./delete.ts";
import { platformClient } from "./platform-session.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

export async function deleteCommandAction(name: string, flags: DeleteFlags): Promise<void> {
  const login = readClientConfig().platform;
  // Without -n: the only namespace of this machine with the name (another machine's needs -n and --host-kubeconfig).
  const namespace = namespaceOf(name, flags.namespace);
  const result = await deleteVirtualCluster({
    name,
    namespace,
    hostKubeconfig: flags.hostKubeconfig,
    platform: login ? platformClient(login) : undefined,
    step: withSpinner,
  });

  const style = styles(colorEnabled(process.stdout));
  const details = [
    result.stopped ? "stopped it" : "it was not running",
    `removed ${result.syncedDeleted} synced host object(s)`,
  ];
  if (result.removedFromPlatform) details.push("removed it from the platform");
  process.stdout.write(
    `${style.green("Deleted")} virtual cluster ${name} in namespace ${namespace} (${details.join(", ")})\n`,
  );
  for (const removed of removeConnectedContexts(result.instances)) {
    const switched = removed.switchedTo ? `; current context is ${removed.switchedTo} again` : "";
    process.stdout.write(`Removed context ${removed.context} from ${removed.file}${switched}\n`);
  }
  for (const leftover of result.leftOnPlatform) {
    const what = [
      leftover.instance && `instance ${leftover.instance.namespace}/${leftover.instance.name}`,
      leftover.accessKey && `access key ${leftover.accessKey}`,
    ].filter(Boolean);
    process.stderr.write(
      `${style.yellow("Warning:")} left on the platform ${leftover.platform}: ${what.join(" and ")} (log in to it and delete them)\n`,
    );
  }
}
