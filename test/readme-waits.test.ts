// The README's waits end: every loop in its shell blocks runs under `timeout`, and the walkthrough's wait for the two
// servers, run as written, stops at once when a server logs an error and prints the logs' last lines, and prints
// them too when its time runs out (there with the limit shortened to 1 s, the only change to the command).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runnableBlocks } from "./support/readme-blocks.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const README = readFileSync(join(REPO, "README.md"), "utf8");

/** Each command of the README's shell blocks with its continuation lines (indented by two spaces). */
function commands(): string[] {
  const list: string[] = [];
  for (const block of runnableBlocks(README).filter((b) => b.kind === "sh")) {
    for (const line of block.text.replace(/<<'EOF'\n[\s\S]*?\nEOF\n/g, "\n").split("\n")) {
      if (line.startsWith("  ") && list.length > 0) list[list.length - 1] += `\n${line}`;
      else if (line.trim() !== "") list.push(line);
    }
  }
  return list;
}

const WAIT = commands().find((command) => command.startsWith("timeout ") && command.includes("listening"));

describe("the README's waits", () => {
  const dir = mkdtempSync(join(tmpdir(), "vc-readme-waits-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (command: string) => spawnSync("bash", ["-c", command], { cwd: dir, encoding: "utf8", timeout: 120_000 });

  it("every loop in a README shell block has a time limit", () => {
    const loops = commands().filter((command) => /(^|[;'&|]\s*)(until|while) /m.test(command));
    assert.ok(loops.length > 0);
    for (const loop of loops) assert.match(loop, /^timeout \d+ /, loop);
  });

  it("the walkthrough's wait stops when a server logs an error, and shows the logs' last lines", () => {
    assert.ok(WAIT, "the walkthrough waits for the servers");
    writeFileSync(join(dir, "platform.log"), "error: 127.0.0.1:8443 is already in use: choose another with --port\n");
    writeFileSync(join(dir, "host.log"), '{"level":30,"msg":"starting"}\n');
    const result = run(WAIT);
    assert.notEqual(result.status, 0);
    assert.match(result.stdout, /==> platform\.log <==\nerror: 127\.0\.0\.1:8443 is already in use/);
    assert.match(result.stdout, /==> host\.log <==/);
  });

  it("the walkthrough's wait ends after its time limit and shows the logs' last lines", () => {
    assert.ok(WAIT);
    writeFileSync(join(dir, "platform.log"), '{"level":30,"msg":"API server listening"}\n');
    writeFileSync(join(dir, "host.log"), '{"level":30,"msg":"opening the store"}\n');
    const result = run(WAIT.replace(/^timeout \d+ /, "timeout 1 "));
    assert.notEqual(result.status, 0);
    assert.match(result.stdout, /==> host\.log <==\n\{"level":30,"msg":"opening the store"\}/);
  });

  it("the walkthrough's wait succeeds once both servers listen", () => {
    assert.ok(WAIT);
    writeFileSync(join(dir, "host.log"), '{"level":30,"msg":"API server listening"}\n');
    const result = run(WAIT);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.equal(result.stdout, "");
  });
});
