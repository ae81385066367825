// The README's "Connect a cluster", run exactly as written: its shell blocks in bash, in a temporary HOME and
// working directory, with `virtualcluster` on the PATH as the package's bin. The walkthrough pauses before its last
// block (delete, stop) so the test can check what the section promises: the cluster online, kubectl through the
// platform as the user (the host's RBAC allows one namespace and refuses another; --as refused), the direct
// endpoint, the space with its RoleBindings and the virtual cluster on the host; then the last block runs and what
// the agent made must be gone.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCli } from "./support/cli-run.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import {
  fixedPortsBusy,
  insidePrivateNetwork,
  privateNetworkUnavailable,
  runFileInPrivateNetwork,
} from "./support/private-network.ts";
import { readmeSection, runnableBlocks, scriptOf } from "./support/readme-blocks.ts";
import { waitFor } from "./support/wait-for.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const SECTION = readmeSection(readFileSync(join(REPO, "README.md"), "utf8"), "Connect a cluster");
/** The ports the section uses as written: platform, host, direct endpoint. */
const PORTS = [8444, 7444, 9444];

// Run as written, on the ports the README names: in a network namespace of its own where the machine gives one, so
// a platform the reader started (or another copy of the suite) is not in its way.
const noNamespace = insidePrivateNetwork() ? undefined : privateNetworkUnavailable();
if (!insidePrivateNetwork() && noNamespace === undefined) {
  runFileInPrivateNetwork(import.meta.url, "README: Connect a cluster", { skip: kubectlSkip || undefined });
} else {
  connectCluster(
    (kubectlSkip || undefined) ?? (noNamespace === undefined ? undefined : await fixedPortsBusy(PORTS, noNamespace)),
  );
}

function connectCluster(skip: string | undefined): void {
  describe("README: Connect a cluster", { skip, timeout: 300_000 }, () => {
    const root = mkdtempSync(join(tmpdir(), "vc-readme-cluster-"));
    const home = join(root, "home");
    const work = join(root, "work");
    const checkpoint = join(root, "walkthrough-done");
    const resume = join(root, "resume");
    const agentPid = join(home, ".virtualcluster", "agents", "edge", "agent.pid");
    let shell: ChildProcess;
    let output = "";
    let exitCode: number | null | undefined;
    let env: NodeJS.ProcessEnv;
    const host = () => new Kubectl(join(work, "host-data", "admin.kubeconfig"));
    const platform = () => new Kubectl(join(work, "platform-data", "admin.kubeconfig"));

    before(async () => {
      const bin = join(root, "bin");
      for (const dir of [home, work, bin]) mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(bin, "virtualcluster"),
        `#!/bin/sh\nexec '${process.execPath}' '${join(REPO, "bin", "virtualcluster.js")}' "$@"\n`,
      );
      chmodSync(join(bin, "virtualcluster"), 0o755);
      const blocks = runnableBlocks(SECTION);
      assert.ok(blocks.length >= 3, "the section has runnable blocks");
      const script =
        "set -euo pipefail\n" +
        scriptOf(blocks.slice(0, -1)) +
        `touch '${checkpoint}'\nuntil [ -f '${resume}' ]; do sleep 0.2; done\n` +
        scriptOf(blocks.slice(-1));
      writeFileSync(join(root, "walkthrough.sh"), script);
      env = { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}` };
      for (const name of ["VIRTUALCLUSTER_HOME", "KUBECONFIG", "LICENSE", "NO_COLOR"]) delete env[name];
      shell = spawn("bash", [join(root, "walkthrough.sh")], { cwd: work, env, detached: true, stdio: "pipe" });
      shell.stdout?.on("data", (chunk) => {
        output += chunk;
      });
      shell.stderr?.on("data", (chunk) => {
        output += chunk;
      });
      shell.once("exit", (code) => {
        exitCode = code;
      });
      await waitFor(
        async () => {
          if (exitCode !== undefined) throw new Error(`the walkthrough failed (exit ${exitCode}):\n${output}`);
          return existsSync(checkpoint);
        },
        "the walkthrough",
        240,
      ).catch((error) => {
        throw exitCode !== undefined ? new Error(`the walkthrough failed (exit ${exitCode}):\n${output}`) : error;
      });
    });

    after(() => {
      if (shell?.pid !== undefined) {
        try {
          process.kill(-shell.pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      // The agent runs in its own session; stop it if the walkthrough did not get that far.
      if (existsSync(agentPid)) {
        try {
          process.kill(Number(readFileSync(agentPid, "utf8")), "SIGTERM");
        } catch {
          // not running
        }
      }
      rmSync(root, { recursive: true, force: true });
    });

    it("connects the cluster, which the platform lists online", async () => {
      const clusters = await platform().ok([
        "get",
        "clusters",
        "edge",
        "-o",
        "jsonpath={.status.online} {.status.phase}",
      ]);
      assert.equal(clusters, "true Ready");
      assert.match(output, /edge\s+Ready\s+true\s+v1\./, "get clusters as shown");
    });

    it("lets kubectl through the platform do what the host's RBAC allows the user, and no more", async () => {
      const user = new Kubectl(join(home, ".kube", "config"));
      assert.equal((await user.ok(["config", "current-context"])).trim(), "virtualcluster-platform_cluster_edge");
      assert.equal(
        await host().ok(["-n", "shop", "get", "configmap", "hello", "-o", "jsonpath={.data.greeting}"]),
        "hi",
      );
      const refused = await user.run(["-n", "kube-system", "get", "secrets"]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /User "platform:user:admin" cannot list resource "secrets"/);
      const impersonating = await user.run(["-n", "shop", "get", "configmaps", "--as", "system:admin"]);
      assert.notEqual(impersonating.code, 0);
      assert.match(impersonating.stderr, /not accepted through the platform/);
    });

    it("reaches the cluster's direct endpoint with a token scoped to it", async () => {
      const kubeconfig = join(root, "direct.kubeconfig");
      const connected = await runCli(["connect", "cluster", "edge", "--direct", "--kubeconfig", kubeconfig], { env });
      assert.equal(connected.code, 0, connected.stderr);
      assert.match(connected.stdout, /direct endpoint, https:\/\/127\.0\.0\.1:9444/);
      const greeting = await new Kubectl(kubeconfig).ok([
        "-n",
        "shop",
        "get",
        "configmap",
        "hello",
        "-o",
        "jsonpath={.data.greeting}",
      ]);
      assert.equal(greeting, "hi");
    });

    it("has the space's namespace with RoleBindings and the virtual cluster's namespace on the host", async () => {
      const binding = JSON.parse(
        await host().ok(["-n", "team-space", "get", "rolebinding", "platform-edit", "-o", "json"]),
      );
      assert.equal(binding.roleRef.name, "edit");
      assert.deepEqual(
        binding.subjects.map((s: { kind: string; name: string }) => `${s.kind}/${s.name}`),
        ["User/platform:user:admin"],
      );
      await host().ok(["get", "namespace", "p-shop-v-preview"]);
    });

    it("deletes the space and the virtual cluster, and stops the agent and the servers", async () => {
      writeFileSync(resume, "");
      await waitFor(async () => exitCode !== undefined, "the last block");
      assert.equal(exitCode, 0, output);
      assert.match(output, /spaceinstance\.management\.platform\.sh "team-space" deleted/);
    });
  });
}
