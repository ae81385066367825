// Stand-alone entry for the `patches` and `config` (settings) commands, used by their tests; main.ts mounts the same
// commands.
import { Command } from "commander";
import { patchesCommand } from "./patches.ts";
import { settingsCommand } from "./settings.ts";

const program = new Command("virtualcluster");
program.addCommand(patchesCommand());
program.addCommand(settingsCommand());
await program.parseAsync(process.argv);
