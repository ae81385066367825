// `virtualcluster platform migrate --from-data-dir DIR --to-etcd URL[,URL...]`: moves a stopped embedded (SQLite)
// platform into etcd, where several replicas can serve it (`platform start --store etcd`).

import type { Command } from "commander";
import { runAction } from "./run-action.ts";
import { addEtcdConnectionOptions, type EtcdFlags, etcdEndpoints, etcdSelection } from "./store-options.ts";

interface MigrateFlags extends EtcdFlags {
  fromDataDir: string;
  toEtcd: string[];
  force?: boolean;
}

async function migrate(flags: MigrateFlags): Promise<void> {
  const { migrateToEtcd } = await import("../platform/migrate-to-etcd.ts");
  const to = etcdSelection(flags.toEtcd, flags);
  const result = await migrateToEtcd({ fromDataDir: flags.fromDataDir, to, force: flags.force === true });
  const replaced = result.replaced > 0 ? ` (after deleting the ${result.replaced} keys it held)` : "";
  process.stdout.write(
    `Copied ${result.keys} keys (revision ${result.fromRevision} of ${flags.fromDataDir}) to etcd prefix ${result.prefix}${replaced}.\n` +
      "Objects keep their names, uids and secrets; their resourceVersions are etcd's now.\n" +
      `Start each replica with the same encryption key and CA (copy ${flags.fromDataDir}/pki to its data directory):\n` +
      `  virtualcluster platform start --store etcd --etcd-endpoints ${flags.toEtcd.join(",")} --etcd-prefix ${result.prefix} --data-dir DIR\n`,
  );
}

export function addMigrateCommand(platform: Command): void {
  const command = platform
    .command("migrate")
    .description("Copy a stopped embedded platform's store into etcd (for several replicas)")
    .requiredOption("--from-data-dir <dir>", "data directory of the stopped platform")
    .requiredOption("--to-etcd <urls>", "etcd client URLs, comma-separated", etcdEndpoints)
    .option("--force", "delete what the etcd prefix holds before copying");
  addEtcdConnectionOptions(command)
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform migrate --from-data-dir ./data --to-etcd http://127.0.0.1:2379\n" +
        "  virtualcluster platform migrate --from-data-dir /var/lib/vcp --to-etcd https://10.0.0.1:2379,https://10.0.0.2:2379 \\\n" +
        "    --etcd-cafile ca.pem --etcd-certfile client.pem --etcd-keyfile client-key.pem",
    )
    .action(runAction(migrate));
}
