// The README's "Several replicas on etcd", run exactly as written in bash: three etcd members and three platform
// replicas, kubectl through the third, then the block that stops all six. Nothing the servers log reaches the
// terminal, and nothing they started is left running.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { etcdMissing } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { kubectlSkip } from "./support/kubectl.ts";
import {
  fixedPortsBusy,
  insidePrivateNetwork,
  privateNetworkUnavailable,
  runFileInPrivateNetwork,
} from "./support/private-network.ts";
import { readmeSection, runnableBlocks, scriptOf } from "./support/readme-blocks.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const SECTION = readmeSection(readFileSync(join(REPO, "README.md"), "utf8"), "Several replicas on etcd");
const PORTS = [8443, 8444, 8445, 12379, 12380, 22379, 22380, 32379, 32380];
const skip = kubectlSkip || etcdMissing() || undefined;

const noNamespace = insidePrivateNetwork() ? undefined : privateNetworkUnavailable();
if (!insidePrivateNetwork() && noNamespace === undefined) {
  runFileInPrivateNetwork(import.meta.url, "README: several replicas on etcd", { skip });
} else {
  replicas(skip ?? (noNamespace === undefined ? undefined : await fixedPortsBusy(PORTS, noNamespace)));
}

/** Processes whose working directory is `dir`: what the README's commands started there. */
function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function replicas(skipReason: string | undefined): void {
  describe("README: several replicas on etcd", { skip: skipReason }, () => {
    const root = mkdtempSync(join(tmpdir(), "vc-readme-etcd-"));
    const work = join(root, "work");
    after(() => {
      for (const pid of processesIn(work)) process.kill(pid, "SIGKILL");
      rmSync(root, { recursive: true, force: true });
    });

    it("starts three replicas on three members, answers through the third, and stops all six", async () => {
      const bin = join(root, "bin");
      for (const dir of [work, bin]) mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(bin, "virtualcluster"),
        `#!/bin/sh\nexec '${process.execPath}' '${join(REPO, "bin", "virtualcluster.js")}' "$@"\n`,
      );
      chmodSync(join(bin, "virtualcluster"), 0o755);
      const [start, stop] = runnableBlocks(SECTION).filter((block) => block.kind === "sh");
      const script = `set -euo pipefail\n${scriptOf([start])}echo README-STOP\n${scriptOf([stop])}`;
      writeFileSync(join(root, "replicas.sh"), script);
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, HOME: root };
      delete env.KUBECONFIG;
      const shell = spawn("bash", [join(root, "replicas.sh")], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      shell.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      shell.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const code = await new Promise<number | null>((resolve) => shell.once("close", resolve));
      assert.equal(code, 0, `${stdout}\n${stderr}`);
      // kubectl's table through the third replica, and nothing else: no server's log in the terminal.
      const shown = stdout.slice(0, stdout.indexOf("README-STOP")).trim().split("\n");
      assert.match(shown[0], /^NAME\s/, stdout);
      assert.ok(
        shown.some((line) => /^admin\s/.test(line)),
        stdout,
      );
      assert.equal(stderr, "", "nothing on the terminal's stderr");
      // The stop block ran after it, and nothing started by the README is still running.
      assert.deepEqual(stdout.slice(stdout.indexOf("README-STOP")).trim(), "README-STOP");
      assert.deepEqual(processesIn(work), []);
      assert.deepEqual(readdirSync(work), []);
    });
  });
}
