// The `virtualcluster` program: one command per file, wired here.

import { Command } from "commander";
import { platformVersion } from "../apimachinery/version.ts";
import { apiserverCommand } from "./apiserver.ts";
import { completionCommand } from "./completion.ts";
import { connectCommand } from "./connect.ts";
import { createCommand } from "./create.ts";
import { deleteCommand } from "./delete.ts";
import { listCommand } from "./list.ts";
import { patchesCommand } from "./patches.ts";
import { pauseCommand } from "./pause.ts";
import { platformCommand } from "./platform.ts";
import { markRequiredOptions } from "./required-in-help.ts";
import { resumeCommand } from "./resume.ts";
import { runCommand } from "./run.ts";
import { settingsCommand } from "./settings.ts";
import { versionCommand } from "./version.ts";

const program = new Command("virtualcluster")
  .description("Manage virtual Kubernetes clusters and the platform they connect to")
  .version(platformVersion().version)
  .showHelpAfterError()
  .addCommand(createCommand())
  .addCommand(deleteCommand())
  .addCommand(listCommand())
  .addCommand(pauseCommand())
  .addCommand(resumeCommand())
  .addCommand(connectCommand())
  .addCommand(platformCommand())
  .addCommand(patchesCommand())
  .addCommand(settingsCommand())
  .addCommand(apiserverCommand())
  .addCommand(runCommand())
  .addCommand(versionCommand());
program.addCommand(completionCommand(() => program));
markRequiredOptions(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
