// What a newcomer meets in the first hour, run as they run it: the real CLI process. A mistake gets one line that
// names the path they gave and what is wrong with it (never a raw errno about a file they did not name).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertCliFailure, runCli } from "./support/cli-run.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const root = mkdtempSync(join(tmpdir(), "vc-first-hour-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("a data directory that cannot be one", () => {
  const file = join(root, "a-file");
  writeFileSync(file, "not a directory\n", { mode: 0o600 });

  it("platform start --data-dir FILE says it is a file, in one line", async () => {
    const run = await runCli(["platform", "start", "--data-dir", file, "--port", "0"]);
    assertCliFailure(run, new RegExp(`--data-dir ${file} is a file, not a directory`));
  });

  it("platform start --data-dir FILE says so before the permission check of that file", async () => {
    writeFileSync(join(root, "open-file"), "x", { mode: 0o644 });
    const run = await runCli(["platform", "start", "--data-dir", join(root, "open-file"), "--port", "0"]);
    assertCliFailure(run, /is a file, not a directory/);
  });

  it("apiserver --data-dir below a file says which file is in the way", async () => {
    const run = await runCli(["apiserver", "--data-dir", join(file, "host-data"), "--port", "0"]);
    assertCliFailure(run, new RegExp(`cannot be created: ${file} is a file, not a directory`));
  });
});

describe("a platform's first start", () => {
  let platform: PlatformProcess;
  before(async () => {
    platform = await startPlatformProcess();
  });
  after(() => platform?.stop());

  it("names the web console and its address on its first screen", () => {
    const lines = platform.stdout().split("\n");
    assert.match(lines[0], /^Platform listening on https:/);
    assert.equal(lines[1], `Web console: ${platform.url}/`);
    assert.match(platform.stdout(), /Its password \(for the web console and POST \/auth\/password\/login\)/);
  });

  it("platform backup into a missing folder names the folder, in one line", async () => {
    const to = join(root, "missing", "snapshot.db");
    const run = await runCli(["platform", "backup", "--data-dir", platform.dataDir, "--to", to]);
    assertCliFailure(run, new RegExp(`the folder ${join(root, "missing")} does not exist \\(create it first\\)`));
  });
});

describe("platform backup", () => {
  it("of a stopped platform into a missing folder says the same", async () => {
    const run = await runCli(["platform", "backup", "--data-dir", join(root, "none"), "--to", join(root, "x", "s.db")]);
    assertCliFailure(run, /the folder .*\/x does not exist/);
    assert.doesNotMatch(run.stderr, /snapshot-tmp|ENOENT/);
  });
});
