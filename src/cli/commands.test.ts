import assert from "node:assert/strict";
import { test } from "node:test";
import { COMMANDS, commandsFor } from "./commands.ts";

test("COMMANDS loads each command under the name users type", async () => {
  for (const [name, load] of Object.entries(COMMANDS)) assert.equal((await load()).name(), name);
});

test("commandsFor() loads only the command being run, and every command for help, completion or a typo", () => {
  assert.deepEqual(commandsFor(["node", "virtualcluster", "run", "--name", "x"]), ["run"]);
  assert.deepEqual(commandsFor(["node", "virtualcluster", "config", "view"]), ["config"]);
  const all = Object.keys(COMMANDS);
  for (const argv of [[], ["--help"], ["help", "run"], ["completion", "bash"], ["rnu"], ["toString"]]) {
    assert.deepEqual(commandsFor(["node", "virtualcluster", ...argv]), all, argv.join(" "));
  }
});
