// `virtualcluster platform rotate-signing-key`: POST signingkeyrotations (admins only). Tokens signed with the old key
// stay valid: its public key stays published until they expire.

import { type Command, Option } from "commander";
import { ROTATE_FORMATS, type RotateFormat, rotate } from "./rotate-action.ts";
import { runAction } from "./run-action.ts";

const SIGNING_ROTATION = {
  resource: "signingkeyrotations",
  kind: "SigningKeyRotation",
  progress: "Rotating the signing key",
  columns: [
    { header: "Key ID", field: "keyID" },
    { header: "Algorithm", field: "algorithm" },
    { header: "Published Key IDs", field: "publishedKeyIDs" },
  ],
};

export function addRotateSigningKeyCommand(platform: Command): void {
  platform
    .command("rotate-signing-key")
    .description("Start signing cluster endpoint tokens with a new key (admins)")
    .addOption(
      new Option("--algorithm <algorithm>", "algorithm of the new key").choices(["ES256", "RS256"]).default("ES256"),
    )
    .addOption(new Option("-o, --output <format>", "output format").choices(ROTATE_FORMATS).default("table"))
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform rotate-signing-key\n  virtualcluster platform rotate-signing-key --algorithm RS256 -o json",
    )
    .action(
      runAction((flags: { algorithm: string; output: RotateFormat }) =>
        rotate(SIGNING_ROTATION, { spec: { algorithm: flags.algorithm }, output: flags.output }),
      ),
    );
}
