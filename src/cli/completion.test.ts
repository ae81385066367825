import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Command } from "commander";
import { bashCompletion, completionCommand, fishCompletion, zshCompletion } from "./completion.ts";
import { platformCommand } from "./platform.ts";

function program(): Command {
  const root = new Command("virtualcluster").addCommand(platformCommand());
  root.addCommand(completionCommand(() => root));
  return root;
}

const script = bashCompletion(program());
const hasBash = spawnSync("bash", ["--version"]).status === 0;

/** What bash offers after typing `line` (a trailing space starts a new word). */
function complete(line: string): string[] {
  const words = line.split(" ");
  const shell = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")})
COMP_CWORD=${words.length - 1}
_virtualcluster_completion
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync("bash", ["--norc", "--noprofile"], {
    input: shell,
    encoding: "utf8",
    cwd: import.meta.dirname,
  });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split("\n").filter(Boolean);
}

describe("completion", { skip: !hasBash && "bash is not installed" }, () => {
  it("bashCompletion() completes commands, aliases and nested commands", () => {
    assert.deepEqual(complete("virtualcluster pl"), ["platform"]);
    assert.deepEqual(complete("virtualcluster platform lo"), ["login", "logout"]);
    assert.deepEqual(complete("virtualcluster platform create "), ["accesskey"]);
    assert.deepEqual(complete("virtualcluster completion "), ["bash", "zsh", "fish"]);
  });

  it("bashCompletion() offers resources once, after get or list, also past option values", () => {
    assert.deepEqual(complete("virtualcluster platform get "), [
      "users",
      "teams",
      "projects",
      "accesskeys",
      "virtualclusters",
    ]);
    assert.deepEqual(complete("virtualcluster platform list v"), ["virtualclusters"]);
    assert.deepEqual(complete("virtualcluster platform get -n p-default v"), ["virtualclusters"]);
    assert.deepEqual(complete("virtualcluster platform get users "), []);
  });

  it("bashCompletion() completes options and their fixed values, and files for other values", () => {
    assert.deepEqual(complete("virtualcluster platform get users -o "), ["table", "wide", "yaml", "json"]);
    assert.deepEqual(complete("virtualcluster platform rotate-signing-key --algorithm R"), ["RS256"]);
    assert.ok(complete("virtualcluster platform login h --").includes("--access-key"));
    assert.ok(complete("virtualcluster platform login h --ca-file completion.t").includes("completion.test.ts"));
  });

  it("zshCompletion() loads the bash function through bashcompinit", () => {
    const zsh = zshCompletion(program());
    assert.match(zsh, /^#compdef virtualcluster\n/);
    assert.match(zsh, /bashcompinit/);
    assert.ok(zsh.includes(script));
    assert.equal(spawnSync("bash", ["-n"], { input: script }).status, 0);
  });
});

const hasFish = spawnSync("fish", ["--version"]).status === 0;

/** What fish offers after typing `line` (`complete -C`), without the descriptions. */
function completeFish(line: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "vc-fish-"));
  try {
    const file = join(dir, "virtualcluster.fish");
    writeFileSync(file, fishCompletion(program()));
    const result = spawnSync("fish", ["--no-config", "-c", `source ${file}; complete -C ${JSON.stringify(line)}`], {
      encoding: "utf8",
      cwd: import.meta.dirname,
    });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, "");
    return result.stdout
      .split("\n")
      .filter(Boolean)
      .map((entry) => entry.split("\t")[0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("fish completion", { skip: !hasFish && "fish is not installed" }, () => {
  it("fishCompletion() completes commands, options, their values, argument choices and files", () => {
    assert.deepEqual(completeFish("virtualcluster pl"), ["platform"]);
    assert.deepEqual(completeFish("virtualcluster platform lo"), ["login", "logout"]);
    assert.deepEqual(completeFish("virtualcluster completion "), ["bash", "fish", "zsh"]);
    assert.deepEqual(completeFish("virtualcluster platform get users -o "), ["json", "table", "wide", "yaml"]);
    assert.ok(completeFish("virtualcluster platform get ").includes("virtualclusters"));
    assert.ok(completeFish("virtualcluster platform login h --").includes("--access-key"));
    assert.ok(completeFish("virtualcluster platform login h --ca-file completion.t").includes("completion.test.ts"));
    assert.deepEqual(
      completeFish("virtualcluster platform login --"),
      completeFish("virtualcluster platform login h --"),
    );
  });
});

describe("help", () => {
  it("every platform and completion command's --help has examples", () => {
    const leaves: Command[] = [];
    const visit = (command: Command) => {
      if (command.commands.length === 0) leaves.push(command);
      command.commands.forEach(visit);
    };
    visit(program());
    assert.ok(leaves.length >= 7);
    for (const command of leaves) {
      let text = "";
      command.configureOutput({ writeOut: (chunk) => (text += chunk) });
      command.outputHelp();
      assert.match(text, /\nExamples:\n {2}.*virtualcluster .*\n/, command.name());
    }
  });
});
