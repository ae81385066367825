// The `virtualcluster` program: one command per file, wired here.

import { Command } from "commander";
import { configCommand } from "./config.ts";
import { patchesCommand } from "./patches.ts";
import { platformCommand } from "./platform.ts";

const program = new Command("virtualcluster")
  .description("Manage virtual Kubernetes clusters and the platform they connect to")
  .showHelpAfterError()
  .addCommand(platformCommand())
  .addCommand(patchesCommand())
  .addCommand(configCommand());

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
