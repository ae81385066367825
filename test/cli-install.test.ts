// Installing `virtualcluster` as a newcomer does, with the machine's own npm and node (older than 24 here: Debian's
// nodejs is 20): a fresh copy of the checkout gets `npm install`, then `npm install -g` of the checkout and of its
// packed tarball go into fresh temporary prefixes, and the command on PATH must run on the Node 24 npm installed
// with the package. npm uses its cache (--prefer-offline), so only a cold cache reaches the registry.

import assert from "node:assert/strict";
import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { accessSync, constants, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const README = readFileSync(join(REPO, "README.md"), "utf8");
const MANIFEST = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { name: string; version: string };
const PACKAGE = MANIFEST.name;
const VERSION = MANIFEST.version;

/** PATH without node_modules/.bin folders (npm test puts ours first): what a user's shell has. */
const userPath = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => dir !== "" && !dir.includes("node_modules"))
  .join(delimiter);

function onUserPath(program: string): string | undefined {
  for (const dir of userPath.split(delimiter)) {
    try {
      accessSync(join(dir, program), constants.X_OK);
      return join(dir, program);
    } catch {
      // not here
    }
  }
  return undefined;
}

const machineNode = onUserPath("node");
const machineNodeMajor = machineNode
  ? Number(spawnSync(machineNode, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.split(".")[0])
  : undefined;
const npmAvailable = onUserPath("npm") !== undefined;

/** The environment of a user's shell: no npm_* variables from `npm test`, no node_modules/.bin on PATH. */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== "NODE_OPTIONS" && name !== "NODE_TEST_CONTEXT") env[name] = value;
  }
  return { ...env, PATH: userPath, ...extra };
}

function npm(args: string[], cwd: string) {
  const run = spawnSync("npm", [...args, "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd,
    env: userEnv(),
    encoding: "utf8",
    timeout: 600_000,
  });
  assert.equal(run.status, 0, `npm ${args.join(" ")}:\n${run.stdout}\n${run.stderr}`);
  return run;
}

/**
 * The warnings in npm's output that the README does not explain. It explains two kinds in its install paragraph:
 * EBADENGINE from an npm that runs on a Node older than 24, for packages it names, and, for `npm install -g` only,
 * the install-scripts notice about this package's own `prepare` script (a global install needs no build).
 */
function unexplainedWarnings(output: string, options: { global?: boolean } = {}): string[] {
  const install = README.slice(README.indexOf("## Install"), README.indexOf("## Quick start"));
  const ownPrepare = `${PACKAGE}@${VERSION} (prepare: npm run build)`;
  const unexplained: string[] = [];
  const notice = output.split("\n").filter((line) => line.startsWith("npm warn install-scripts"));
  const onlyOwnPrepare =
    options.global &&
    install.includes("`install-scripts`") &&
    notice.filter((line) => /^npm warn install-scripts {3}\S/.test(line)).every((line) => line.endsWith(ownPrepare));
  for (const line of output.split("\n")) {
    if (!/^npm warn/.test(line)) continue;
    if (onlyOwnPrepare && line.startsWith("npm warn install-scripts")) continue;
    if (/^npm warn EBADENGINE( (Unsupported engine \{|\}| {2}(required|current):.*))?$/.test(line)) continue;
    const engine = /^npm warn EBADENGINE {3}package: '(@?[^@']+)@/.exec(line);
    if (engine && install.includes(`\`${engine[1]}\``)) continue;
    unexplained.push(line);
  }
  return unexplained;
}

/** Runs the installed command with a user's PATH (the prefix's bin first). */
function installed(prefix: string, args: string[], home: string) {
  return spawnSync("virtualcluster", args, {
    env: userEnv({ PATH: `${join(prefix, "bin")}${delimiter}${userPath}`, VIRTUALCLUSTER_HOME: home }),
    encoding: "utf8",
    timeout: 300_000,
  });
}

function assertRunsOnNode24(run: SpawnSyncReturns<string>): void {
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}${run.error ?? ""}`);
  assert.match(run.stdout, new RegExp(`^Client: virtualcluster ${VERSION.replaceAll(".", "\\.")} \\(Node\\.js v24\\.`));
  assert.equal(run.stderr, "");
}

describe("installing virtualcluster with npm", {
  skip: !npmAvailable && "npm is not installed",
  timeout: 1_800_000,
}, () => {
  const root = mkdtempSync(join(tmpdir(), "vc-install-"));
  const checkout = join(root, "checkout");
  const home = join(root, "home");
  let installOutput = "";

  before(
    () => {
      // A fresh copy of the checkout: the files git has (tracked, and new ones it does not ignore), no node_modules.
      const files = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
        cwd: REPO,
        encoding: "utf8",
      });
      assert.equal(files.status, 0, files.stderr);
      for (const file of files.stdout.split("\0")) {
        if (file === "" || file === "node_modules") continue;
        mkdirSync(dirname(join(checkout, file)), { recursive: true });
        try {
          copyFileSync(join(REPO, file), join(checkout, file));
        } catch (error) {
          // A file deleted in the working tree but still in the index.
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
      const install = npm(["install"], checkout);
      installOutput = `${install.stdout}\n${install.stderr}`;
    },
    { timeout: 900_000 },
  );
  after(() => rmSync(root, { recursive: true, force: true }));

  it("npm install in a fresh checkout prints no warning that the README does not explain", () => {
    assert.deepEqual(unexplainedWarnings(installOutput), [], installOutput);
    assert.doesNotMatch(installOutput, /install-scripts/);
  });

  it("npm install -g of the checkout puts a virtualcluster on PATH that runs on Node 24", () => {
    const prefix = join(root, "prefix-checkout");
    const run = npm(["install", "-g", "--prefix", prefix, checkout], root);
    assert.deepEqual(unexplainedWarnings(`${run.stdout}\n${run.stderr}`, { global: true }), []);
    assertRunsOnNode24(installed(prefix, ["version"], home));
    const list = installed(prefix, ["list"], home);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stderr, /No virtual clusters found/);
  });

  it("npm install -g of the packed tarball puts a virtualcluster on PATH that runs a platform on Node 24", {
    timeout: 900_000,
  }, async () => {
    const prefix = join(root, "prefix-tarball");
    // `npm install` above built the checkout (its prepare script); packing skips building the same files again.
    const packed = npm(["pack", "--ignore-scripts", "--pack-destination", root], checkout);
    const tarball = join(root, packed.stdout.trim().split("\n").at(-1) ?? "");
    const run = npm(["install", "-g", "--prefix", prefix, tarball], root);
    const output = `${run.stdout}\n${run.stderr}`;
    assert.deepEqual(unexplainedWarnings(output, { global: true }), [], output);
    assertRunsOnNode24(installed(prefix, ["version"], home));

    // A long-running command through the relaunch: it starts, and SIGTERM to the command stops the platform.
    const child = spawn("virtualcluster", ["platform", "start", "--data-dir", join(root, "data"), "--port", "0"], {
      env: userEnv({ PATH: `${join(prefix, "bin")}${delimiter}${userPath}`, LOG_LEVEL: "warn" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        out += chunk;
        if (out.includes("Platform listening on https://")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`platform start exited with ${code}: ${out}`)));
    });
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
  });

  it("npx virtualcluster in the checkout works without warnings", () => {
    const run = spawnSync("npx", ["virtualcluster", "version"], { cwd: checkout, env: userEnv(), encoding: "utf8" });
    assertRunsOnNode24(run);
  });
});

describe("virtualcluster under a Node older than 24", {
  skip: (machineNodeMajor === undefined || machineNodeMajor >= 24) && "the machine's node is not older than 24",
}, () => {
  it("without a Node 24 beside it, says in one sentence which Node it needs and how to get it", () => {
    // The command alone, as an install that brought no Node 24 (another OS or CPU) has it.
    const dir = mkdtempSync(join(tmpdir(), "vc-oldnode-"));
    try {
      mkdirSync(join(dir, "bin"));
      copyFileSync(join(REPO, "bin", "virtualcluster.js"), join(dir, "bin", "virtualcluster.js"));
      copyFileSync(join(REPO, "package.json"), join(dir, "package.json"));
      const run = spawnSync(machineNode as string, [join(dir, "bin", "virtualcluster.js"), "version"], {
        env: userEnv(),
        encoding: "utf8",
      });
      assert.equal(run.status, 1);
      assert.equal(run.stdout, "");
      const lines = run.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, run.stderr);
      assert.match(
        lines[0],
        new RegExp(`^error: virtualcluster needs Node\\.js 24, but this is Node\\.js ${machineNodeMajor}\\.`),
      );
      assert.match(lines[0], /install Node\.js 24, for example with `nvm install 24`/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with the checkout's Node 24, runs the command on it", () => {
    const run = spawnSync(machineNode as string, [join(REPO, "bin", "virtualcluster.js"), "version"], {
      env: userEnv(),
      encoding: "utf8",
    });
    assertRunsOnNode24(run);
  });
});
