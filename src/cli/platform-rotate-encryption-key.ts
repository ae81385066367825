// `virtualcluster platform rotate-encryption-key`: POST encryptionkeyrotations (admins only). The running platform
// re-encrypts every secret value in its store under a new key and then drops the old key from its key file.

import { type Command, Option } from "commander";
import { ROTATE_FORMATS, type RotateFormat, rotate } from "./rotate-action.ts";
import { runAction } from "./run-action.ts";

const ENCRYPTION_ROTATION = {
  resource: "encryptionkeyrotations",
  kind: "EncryptionKeyRotation",
  progress: "Re-encrypting the platform's secrets under a new key",
  columns: [
    { header: "Key ID", field: "keyID" },
    { header: "Retired Key IDs", field: "retiredKeyIDs" },
    { header: "Re-encrypted", field: "reencrypted" },
  ],
};

export function addRotateEncryptionKeyCommand(platform: Command): void {
  platform
    .command("rotate-encryption-key")
    .description("Re-encrypt the platform's stored secrets under a new key and retire the old one (admins)")
    .addOption(new Option("-o, --output <format>", "output format").choices(ROTATE_FORMATS).default("table"))
    .addHelpText(
      "after",
      "\nThe key file (--encryption-key-file, default <data-dir>/pki/encryption.key) is rewritten: back it up again afterwards." +
        "\n\nExamples:\n  virtualcluster platform rotate-encryption-key\n  virtualcluster platform rotate-encryption-key -o yaml",
    )
    .action(
      runAction((flags: { output: RotateFormat }) => rotate(ENCRYPTION_ROTATION, { spec: {}, output: flags.output })),
    );
}
