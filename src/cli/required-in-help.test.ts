import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Command, Option } from "commander";
import { patchesCommand } from "./patches.ts";
import { markRequiredOptions } from "./required-in-help.ts";

function helpOf(command: Command): string {
  let text = "";
  command.configureOutput({ writeOut: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

describe("required options in help", () => {
  it("markRequiredOptions() marks mandatory options (required), in subcommands too, and nothing else", () => {
    const root = markRequiredOptions(new Command("virtualcluster").addCommand(patchesCommand()));
    const apply = root.commands[0].commands.find((command) => command.name() === "apply") as Command;
    const help = helpOf(apply).replace(/\s+/g, " ");
    assert.match(help, /--resource <resource> synced resource whose patches to apply \(choices: [^)]*\) \(required\)/);
    assert.match(help, /-f, --file <file> settings file \(virtualcluster\.yaml\) \(required\)/);
    assert.match(help, /--name <name> virtual cluster name \(default: "virtualcluster"\) --namespace/);
    const plain = helpOf(markRequiredOptions(new Command("x").addOption(new Option("--y <y>", "why"))));
    assert.doesNotMatch(plain, /required/);
  });
});
