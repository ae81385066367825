// `virtualcluster platform restore --from FILE --data-dir DIR`: makes a snapshot the store of a stopped platform.

import type { Command } from "commander";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles } from "./terminal.ts";

interface RestoreFlags {
  from: string;
  dataDir: string;
  force?: boolean;
  encryptionKeyFile?: string;
  allowUnauthenticated?: boolean;
}

async function restore(flags: RestoreFlags): Promise<void> {
  const { restoreDataDir } = await import("../platform/restore.ts");
  const result = await restoreDataDir({
    from: flags.from,
    dataDir: flags.dataDir,
    force: flags.force === true,
    encryptionKeyFile: flags.encryptionKeyFile,
    allowUnauthenticated: flags.allowUnauthenticated === true,
  });
  const label = styles(colorEnabled(process.stderr)).yellow("warning:");
  for (const warning of result.warnings) process.stderr.write(`${label} ${warning}\n`);
  const { keys, revision, damaged } = result.replaced;
  const replaced = damaged
    ? " It replaced a damaged store."
    : keys > 0
      ? ` It replaced a store of ${keys} keys at revision ${revision}.`
      : "";
  const checked = result.authenticatedWith ? ` Its seal (encryption key ${result.authenticatedWith}) matched.` : "";
  const keyFlag = flags.encryptionKeyFile ? ` --encryption-key-file ${flags.encryptionKeyFile}` : "";
  process.stdout.write(
    `Restored revision ${result.revision} (${result.keys} keys) into ${result.file}.${checked}${replaced}\n` +
      `Start the platform with: virtualcluster platform start --data-dir ${flags.dataDir}${keyFlag}\n`,
  );
}

export function addRestoreCommand(platform: Command): void {
  platform
    .command("restore")
    .description("Make a snapshot from `platform backup` the store of a data directory (platform stopped)")
    .requiredOption("--from <file>", "snapshot file to restore")
    .option("--data-dir <dir>", "data directory to restore into", "./data")
    .option("--force", "replace a store that holds objects")
    .option(
      "--encryption-key-file <file>",
      "the encryption key file the backup was sealed with (default <data-dir>/pki/encryption.key)",
    )
    .option("--allow-unauthenticated", "restore a backup that carries no seal (older versions, a copied platform.db)")
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform restore --from ./platform-snapshot.db --data-dir ./data-restored\n  virtualcluster platform restore --from /backup/vcp.db --data-dir /var/lib/vcp --force",
    )
    .action(runAction(restore));
}
