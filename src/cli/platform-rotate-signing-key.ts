// `virtualcluster platform rotate-signing-key`: POST signingkeyrotations (admins only). Tokens signed with the old key
// stay valid: its public key stays published until they expire.

import { type Command, Option } from "commander";
import { API_GROUP_PATH } from "../virtualcluster/lifecycle/platform-client.ts";
import { formatData, renderTable } from "./output.ts";
import { loggedInClient } from "./platform-session.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

const FORMATS = ["table", "yaml", "json"] as const;

interface RotateFlags {
  algorithm: "ES256" | "RS256";
  output: (typeof FORMATS)[number];
}

interface Rotation {
  status?: { keyID?: string; algorithm?: string; publishedKeyIDs?: string[] };
}

async function rotate(flags: RotateFlags): Promise<void> {
  const client = loggedInClient();
  const body = {
    apiVersion: "management.platform.sh/v1",
    kind: "SigningKeyRotation",
    spec: { algorithm: flags.algorithm },
  };
  const rotation = await withSpinner("Rotating the signing key", () =>
    client.request<Rotation>("POST", `${API_GROUP_PATH}/signingkeyrotations`, { body }),
  );
  if (flags.output !== "table") {
    process.stdout.write(formatData(rotation, flags.output));
    return;
  }
  const status = rotation.status ?? {};
  const table = {
    columnDefinitions: [{ name: "Key ID" }, { name: "Algorithm" }, { name: "Published Key IDs" }],
    rows: [{ cells: [status.keyID, status.algorithm, (status.publishedKeyIDs ?? []).join(",")] }],
  };
  process.stdout.write(renderTable(table, { header: styles(colorEnabled(process.stdout)).bold }));
}

export function addRotateSigningKeyCommand(platform: Command): void {
  platform
    .command("rotate-signing-key")
    .description("Start signing cluster endpoint tokens with a new key (admins)")
    .addOption(
      new Option("--algorithm <algorithm>", "algorithm of the new key").choices(["ES256", "RS256"]).default("ES256"),
    )
    .addOption(new Option("-o, --output <format>", "output format").choices(FORMATS).default("table"))
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform rotate-signing-key\n  virtualcluster platform rotate-signing-key --algorithm RS256 -o json",
    )
    .action(runAction(rotate));
}
