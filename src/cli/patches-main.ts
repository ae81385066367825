// Stand-alone entry for the `patches` and `config` commands (used by their tests; main.ts mounts the same commands).
import { Command } from "commander";
import { configCommand } from "./config.ts";
import { patchesCommand } from "./patches.ts";

const program = new Command("virtualcluster");
program.addCommand(patchesCommand());
program.addCommand(configCommand());
await program.parseAsync(process.argv);
