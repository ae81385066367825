// `virtualcluster config defaults`: the virtual cluster settings (virtualcluster.yaml) with every default filled in.
// The command keeps the name users type, `config`; in the code "config" is the platform's Config only.

import { Command } from "commander";
import { stringify } from "yaml";
import { withDefaults } from "../virtualcluster/settings/defaults.ts";
import { parseSettingsText, readSettingsFile, SettingsError } from "../virtualcluster/settings/load.ts";
import { type CommandIO, processIO } from "./patches-io.ts";

/** The `config` command (virtualcluster.yaml settings). */
export function settingsCommand(io: CommandIO = processIO): Command {
  const command = new Command("config").description("Inspect virtualcluster.yaml settings");
  command
    .command("defaults")
    .description("Print the settings with every default filled in (of an empty file, or of --file)")
    .option("-f, --file <file>", "settings file (virtualcluster.yaml)")
    .option(
      "--namespace <namespace>",
      "the virtual cluster's namespace (default of external.platform.apiKey.namespace)",
    )
    .action(async (flags: { file?: string; namespace?: string }) => {
      try {
        const raw = flags.file ? parseSettingsText(readSettingsFile(flags.file)) : {};
        const { settings, problems } = withDefaults(raw, { namespace: flags.namespace });
        if (problems.length > 0) throw new SettingsError(problems);
        io.stdout(stringify(settings));
      } catch (error) {
        if (!(error instanceof SettingsError)) throw error;
        io.stderr(error.problems.map((line) => `${line}\n`).join(""));
        process.exitCode = 1;
      }
    });
  return command;
}
