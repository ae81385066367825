// The `virtualcluster` command line: one command per file, wired here (loaded on demand, see commands.ts).

import { Command } from "commander";
import { platformVersion } from "../apimachinery/version.ts";
import { COMMANDS, commandsFor } from "./commands.ts";
import { completionCommand } from "./completion.ts";
import { markRequiredOptions } from "./required-in-help.ts";

const program = new Command("virtualcluster")
  .description("Manage virtual Kubernetes clusters and the platform they connect to")
  .version(platformVersion().version)
  .showHelpAfterError();
const loaded = await Promise.all(commandsFor(process.argv).map((name) => COMMANDS[name]()));
for (const command of loaded) program.addCommand(command);
program.addCommand(completionCommand(() => program));
markRequiredOptions(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
