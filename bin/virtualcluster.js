#!/usr/bin/env node
// The `virtualcluster` command. It must start under whatever `node` the machine has, so this file stays plain
// JavaScript that old Node versions parse (no TypeScript, nothing newer than ES2020 but top-level await).
//
// The program needs Node 24 (node:sqlite, type stripping). npm installs Node 24 with the package (the optional
// dependency node-<os>-<cpu>, no install script); when this file runs under another Node it runs itself again under
// that one, and where there is none it says in one sentence what to do instead of failing with a stack trace.
//
// In a checkout the TypeScript sources run directly (Node 24 strips types). Node refuses to strip types under
// node_modules, so an installed copy runs the JavaScript that `npm run build` emitted to dist/ (the `prepare` script
// builds it on `npm install` in a checkout and before `npm pack`).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import nodeModule, { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const NEEDED_MAJOR = 24;
const RELAUNCHED = "VIRTUALCLUSTER_RELAUNCHED";
const self = fileURLToPath(import.meta.url);
const major = Number(process.versions.node.split(".")[0]);

/** The Node binary npm installed with this package for this machine, if any. */
function pinnedNode() {
  const name = `node-${process.platform}-${process.arch}`;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    const binary = manifest.replace(/package\.json$/, process.platform === "win32" ? "node.exe" : "bin/node");
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/** Runs this file again under `binary`, passing signals on, and exits as it does. */
function relaunch(binary) {
  const child = spawn(binary, [self, ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, [RELAUNCHED]: "1" },
  });
  // A repeated signal is harmless: the long-running commands ignore a second one while they stop.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (error) => {
    process.stderr.write(`error: cannot run Node ${NEEDED_MAJOR} at ${binary}: ${error.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

async function run() {
  // V8's compiled code, and for the TypeScript sources their type-stripped text, are cached between runs (in the
  // system's temporary directory, or NODE_COMPILE_CACHE): commands start faster, and a long-running process from a
  // checkout does not keep Node's type stripper (about 20 MB) once the cache holds every module.
  nodeModule.enableCompileCache?.();
  const source = new URL("../src/cli/main.ts", import.meta.url);
  const built = new URL("../dist/cli/main.js", import.meta.url);
  const installed = self.split(/[\\/]/).includes("node_modules");
  if (!installed && existsSync(source)) {
    await import(source.href);
  } else if (existsSync(built)) {
    await import(built.href);
  } else {
    process.stderr.write("error: this copy of virtualcluster is not built: run `npm run build` in the package\n");
    process.exit(1);
  }
}

const pinned = major === NEEDED_MAJOR || process.env[RELAUNCHED] ? undefined : pinnedNode();
if (major === NEEDED_MAJOR) {
  await run();
} else if (pinned) {
  relaunch(pinned);
} else if (major > NEEDED_MAJOR && !process.env[RELAUNCHED]) {
  // Newer Node keeps what 24 has; no pinned binary for this machine, so try the one we have.
  await run();
} else {
  process.stderr.write(
    `error: virtualcluster needs Node.js ${NEEDED_MAJOR}, but this is Node.js ${process.versions.node} ` +
      `(${process.execPath}) and no Node.js ${NEEDED_MAJOR} came with this copy (npm brings one on Linux x64 and ` +
      `arm64): install Node.js ${NEEDED_MAJOR}, for example with \`nvm install ${NEEDED_MAJOR}\`, and run virtualcluster with it\n`,
  );
  process.exit(1);
}
