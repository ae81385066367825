// The installed program: `npm pack` builds dist/ (prepare) and ships it; an installed copy lives under node_modules,
// where Node refuses to strip types, so it must run the built JavaScript. The package is unpacked into a temporary
// node_modules whose dependencies link to this checkout's (no registry needed), then started and used.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const npmAvailable = spawnSync("npm", ["--version"], { stdio: "ignore" }).status === 0;

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, ...env }, timeout: 300_000 });
}

describe("the packed and installed program", { skip: !npmAvailable && "npm is not installed" }, () => {
  const root = mkdtempSync(join(tmpdir(), "vc-package-"));
  const modules = join(root, "node_modules");
  const installed = join(modules, "virtualcluster-platform");
  const bin = join(installed, "bin", "virtualcluster.js");
  let files: string[] = [];

  before(() => {
    const packed = spawnSync("npm", ["pack", "--json", "--pack-destination", root], {
      cwd: REPO,
      encoding: "utf8",
      timeout: 600_000,
    });
    assert.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("[")));
    files = info.files.map((f: { path: string }) => f.path);
    mkdirSync(installed, { recursive: true });
    const untar = spawnSync("tar", ["-xzf", join(root, info.filename), "--strip-components=1", "-C", installed]);
    assert.equal(untar.status, 0, String(untar.stderr));
    for (const name of readdirSync(join(REPO, "node_modules"))) {
      if (name.startsWith(".")) continue;
      symlinkSync(join(REPO, "node_modules", name), join(modules, name));
    }
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("npm pack ships bin and the built JavaScript, not the TypeScript sources or tests", () => {
    assert.ok(files.includes("bin/virtualcluster.js"));
    assert.ok(files.includes("dist/cli/main.js"));
    assert.ok(files.includes("package.json"));
    assert.equal(
      files.some((f) => f.endsWith(".ts")),
      false,
    );
    assert.equal(
      files.some((f) => f.startsWith("test/") || f.includes(".test.")),
      false,
    );
  });

  it("the installed bin runs from node_modules (the built JavaScript)", () => {
    const version = run([bin, "--version"]);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version);
    const help = run([bin, "platform", "--help"]);
    assert.match(help.stdout, /login \[options\] <url>/);
  });

  it("the installed copy starts a platform and logs in to it", async () => {
    const data = join(root, "data");
    const child = spawn(process.execPath, [bin, "platform", "start", "--data-dir", data, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LOG_LEVEL: "warn" },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk) => {
          out += chunk;
          const match = /Platform listening on (https:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]);
        });
        child.once("exit", (code) => reject(new Error(`platform exited with ${code}`)));
      });
      const env = { VIRTUALCLUSTER_HOME: join(root, "home") };
      const key = readFileSync(join(data, "admin-access-key"), "utf8").trim();
      const login = run(
        [bin, "platform", "login", url, "--ca-file", join(data, "pki", "ca.crt"), "--access-key", key],
        env,
      );
      assert.equal(login.status, 0, login.stderr);
      const users = run([bin, "platform", "get", "users", "-o", "json"], env);
      assert.equal(users.status, 0, users.stderr);
      assert.equal(JSON.parse(users.stdout).items[0].metadata.name, "admin");
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
});
