// --log-level and --log-format of the long-running commands, on the real processes: JSON lines when stderr is not a
// terminal, text lines with the same fields with --log-format text or on a terminal (a pseudo-terminal from script(1)).

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "./support/cli-run.ts";

const MAIN = new URL("../src/cli/main.ts", import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), "vc-logs-"));
let dirs = 0;
const scriptAvailable = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/** Starts a command, collects its output until `ready` matches, then stops it; resolves with what it printed. */
function runUntil(command: string, args: string[], ready: RegExp): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.LOG_LEVEL;
  const child: ChildProcess = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (ready.test(output)) child.kill("SIGTERM");
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.once("error", reject);
    child.once("exit", () => (ready.test(output) ? resolve(output) : reject(new Error(`not ready:\n${output}`))));
  });
}

const apiserver = (...flags: string[]) => [
  MAIN,
  "apiserver",
  "--data-dir",
  join(root, `d${dirs++}`),
  "--port",
  "0",
  ...flags,
];
const TEXT_READY = /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}cluster API server ready url=https:\/\/127\.0\.0\.1:\d+\r?$/m;

describe("log options of the long-running commands", () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  it("platform start, apiserver and run take --log-level and --log-format", async () => {
    for (const command of [["platform", "start"], ["apiserver"], ["run"]]) {
      const help = await runCli([...command, "--help"]);
      assert.match(help.stdout, /--log-level <level>/, command.join(" "));
      assert.match(help.stdout, /--log-format <format>/, command.join(" "));
    }
    const wrong = await runCli(["apiserver", "--log-format", "xml"]);
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      /error: option '--log-format <format>' argument 'xml' is invalid. Allowed choices are text, json/,
    );
  });

  it("writes JSON lines when stderr is not a terminal", async () => {
    const output = await runUntil(process.execPath, apiserver(), /cluster API server ready/);
    const records = output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line));
    const ready = records.find((record) => record.msg === "cluster API server ready");
    assert.equal(ready.level, 30);
    assert.match(ready.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it("writes text lines with the same fields with --log-format text, and honours --log-level", async () => {
    const output = await runUntil(process.execPath, apiserver("--log-format", "text"), TEXT_READY);
    assert.doesNotMatch(output, /^\{/m);
    const quiet = await runUntil(
      process.execPath,
      apiserver("--log-format", "text", "--log-level", "warn"),
      /API server listening on/,
    );
    assert.doesNotMatch(quiet, / INFO {2}/);
  });

  it("writes text on a terminal by default", { skip: !scriptAvailable && "script(1) is not installed" }, async () => {
    const command = [process.execPath, ...apiserver()].map((arg) => `'${arg}'`).join(" ");
    const output = await runUntil("script", ["-qec", command, "/dev/null"], TEXT_READY);
    assert.doesNotMatch(output, /^\{"level"/m);
  });
});
