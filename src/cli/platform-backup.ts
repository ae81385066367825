// `virtualcluster platform backup --to FILE`: a consistent snapshot of the platform's store, taken by the running
// platform while it serves (or read from a stopped one), like `etcdctl snapshot save`.

import type { Command } from "commander";
import { runAction } from "./run-action.ts";

interface BackupFlags {
  to: string;
  dataDir: string;
  force?: boolean;
  encryptionKeyFile?: string;
}

async function backup(flags: BackupFlags): Promise<void> {
  const { backupDataDir } = await import("../platform/backup.ts");
  const result = await backupDataDir({
    dataDir: flags.dataDir,
    to: flags.to,
    force: flags.force === true,
    encryptionKeyFile: flags.encryptionKeyFile,
  });
  const how = result.online ? "taken by the running platform" : "read from the stopped platform's store";
  process.stdout.write(
    `Snapshot at revision ${result.revision} (${result.keys} keys) written to ${result.file} (${how}), ` +
      `sealed under encryption key ${result.sealedWith}: restore refuses it if it changes.\n` +
      "It holds the store only: keep a copy of the data directory's pki/ folder (CA and encryption keys) and " +
      "admin-access-key with it, and keep all of them as secret as the data directory.\n",
  );
}

export function addBackupCommand(platform: Command): void {
  platform
    .command("backup")
    .description("Write a consistent snapshot of the platform's store to a file, while it serves")
    .requiredOption("--to <file>", "snapshot file to write (mode 0600)")
    .option("--data-dir <dir>", "data directory of the platform", "./data")
    .option("--force", "replace --to when it exists")
    .option(
      "--encryption-key-file <file>",
      "the store's encryption key file, which the snapshot's seal is keyed from (default <data-dir>/pki/encryption.key)",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform backup --to ./platform-snapshot.db\n  virtualcluster platform backup --data-dir /var/lib/vcp --to /backup/vcp.db --force",
    )
    .action(runAction(backup));
}
