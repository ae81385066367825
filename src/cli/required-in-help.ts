// Commander's help does not say which options are required (requiredOption, makeOptionMandatory); this marks them
// "(required)" in every command's help, as kubectl and cobra do.

import { type Command, Help, type Option } from "commander";

/** Marks the mandatory options of `command` and of all its subcommands in their help. */
export function markRequiredOptions(command: Command): Command {
  command.configureHelp({
    optionDescription(this: Help, option: Option): string {
      const text = Help.prototype.optionDescription.call(this, option);
      return option.mandatory ? `${text} (required)` : text;
    },
  });
  for (const sub of command.commands) markRequiredOptions(sub);
  return command;
}
