// `virtualcluster platform ...`: run the management platform, log in to one and use it. One file per command.

import { Command } from "commander";
import { addBackupCommand } from "./platform-backup.ts";
import { addCreateCommand } from "./platform-create.ts";
import { addGetCommand } from "./platform-get.ts";
import { addLoginCommand } from "./platform-login.ts";
import { addLogoutCommand } from "./platform-logout.ts";
import { addMigrateCommand } from "./platform-migrate.ts";
import { addRestoreCommand } from "./platform-restore.ts";
import { addRotateEncryptionKeyCommand } from "./platform-rotate-encryption-key.ts";
import { addRotateSigningKeyCommand } from "./platform-rotate-signing-key.ts";
import { addStartCommand } from "./platform-start.ts";
import { addStoreInfoCommand } from "./platform-store-info.ts";

export function platformCommand(): Command {
  const platform = new Command("platform").description("Run and use the management platform");
  addStartCommand(platform);
  addLoginCommand(platform);
  addLogoutCommand(platform);
  addCreateCommand(platform);
  addGetCommand(platform);
  addRotateSigningKeyCommand(platform);
  addRotateEncryptionKeyCommand(platform);
  addBackupCommand(platform);
  addRestoreCommand(platform);
  addMigrateCommand(platform);
  addStoreInfoCommand(platform);
  platform.addHelpText(
    "after",
    `
Examples:
  virtualcluster platform start --data-dir ./data
  virtualcluster platform login 127.0.0.1:8443 --ca-file ./data/pki/ca.crt --access-key "$(cat ./data/admin-access-key)"
  virtualcluster platform get users`,
  );
  return platform;
}
