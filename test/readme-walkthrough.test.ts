// The README's "From nothing to a connected virtual cluster", run exactly as written: its shell blocks (and the
// settings file it shows) in bash, in a temporary HOME and working directory, with `virtualcluster` on the PATH as
// the package's bin. The walkthrough pauses before "Changing and removing virtual clusters" so the test can check
// what the walkthrough promises (patched objects on the host, a working connected context, the dedicated key flow);
// then that part runs and everything must be gone.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { API, AuthClient } from "./support/auth-client.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import {
  fixedPortsBusy,
  insidePrivateNetwork,
  privateNetworkUnavailable,
  runFileInPrivateNetwork,
} from "./support/private-network.ts";
import { readmeSection, readmeSubsection, runnableBlocks, scriptOf } from "./support/readme-blocks.ts";
import { installProgram } from "./support/readme-run.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const README = readFileSync(join(REPO, "README.md"), "utf8");
const SECTION = readmeSection(README, "From nothing to a connected virtual cluster");
const CLEANUP = readmeSubsection(README, "Changing and removing virtual clusters");
/** The ports the walkthrough uses as written. */
const PORTS = [8443, 7443];

async function until(check: () => boolean, what: string, seconds: number, failed: () => string | undefined) {
  const deadline = Date.now() + seconds * 1000;
  while (!check()) {
    const failure = failed();
    if (failure !== undefined) throw new Error(`${what}: ${failure}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// Run as written, on the ports the README names: in a network namespace of its own where the machine gives one, so
// a platform the reader started with the quick start's first command (on 8443) is not in its way.
const noNamespace = insidePrivateNetwork() ? undefined : privateNetworkUnavailable();
if (!insidePrivateNetwork() && noNamespace === undefined) {
  runFileInPrivateNetwork(import.meta.url, "README walkthrough", { skip: kubectlSkip || undefined });
} else {
  walkthrough(
    (kubectlSkip || undefined) ?? (noNamespace === undefined ? undefined : await fixedPortsBusy(PORTS, noNamespace)),
  );
}

function walkthrough(skip: string | undefined): void {
  describe("README walkthrough", { skip }, () => {
    const root = mkdtempSync(join(tmpdir(), "vc-readme-"));
    const home = join(root, "home");
    const work = join(root, "work");
    const checkpoint = join(root, "walkthrough-done");
    const resume = join(root, "resume");
    let shell: ChildProcess;
    let output = "";
    let exitCode: number | null | undefined;

    before(async () => {
      const bin = join(root, "bin");
      for (const dir of [home, work, bin]) mkdirSync(dir, { recursive: true });
      installProgram(bin);

      const walkthrough = runnableBlocks(SECTION.replace(CLEANUP, ""));
      const cleanup = runnableBlocks(CLEANUP);
      assert.ok(walkthrough.length > 0 && cleanup.length > 0, "the README section has runnable blocks");
      // Test glue between the two parts only: announce the pause, wait for the checks.
      const script =
        "set -euo pipefail\n" +
        scriptOf(walkthrough) +
        `touch '${checkpoint}'\nuntil [ -f '${resume}' ]; do sleep 0.2; done\n` +
        scriptOf(cleanup);
      writeFileSync(join(root, "walkthrough.sh"), script);

      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}` };
      for (const name of ["VIRTUALCLUSTER_HOME", "KUBECONFIG", "LICENSE", "NO_COLOR"]) delete env[name];
      // Its own process group: the servers it starts in the background are stopped with it.
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
      await until(
        () => existsSync(checkpoint),
        "the walkthrough",
        480,
        () => (exitCode !== undefined ? `it failed (exit ${exitCode}):\n${output}` : undefined),
      );
    });

    after(() => {
      if (shell?.pid !== undefined) {
        try {
          process.kill(-shell.pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      // Virtual clusters run in their own sessions; stop any that the walkthrough left behind.
      const clusters = join(home, ".virtualcluster", "clusters");
      for (const namespace of existsSync(clusters) ? readdirSync(clusters) : []) {
        for (const name of readdirSync(join(clusters, namespace))) {
          const pidFile = join(clusters, namespace, name, "runtime.pid");
          if (!existsSync(pidFile)) continue;
          try {
            process.kill(Number(readFileSync(pidFile, "utf8")), "SIGTERM");
          } catch {
            // not running
          }
        }
      }
      rmSync(root, { recursive: true, force: true });
    });

    it("has at most ten commands in the walkthrough proper", () => {
      const proper = SECTION.slice(0, SECTION.indexOf("### "));
      const commands = runnableBlocks(proper)
        .filter((block) => block.kind === "sh")
        .flatMap((block) => block.text.replace(/<<'EOF'\n[\s\S]*?\nEOF\n/g, "\n").split("\n"))
        .filter((line) => line.trim() !== "" && !line.startsWith("  ") && !line.trim().startsWith("#"));
      assert.ok(commands.length <= 10, `${commands.length} commands:\n${commands.join("\n")}`);
    });

    it("syncs the Service and Endpoints to the host with the patched values", async () => {
      const host = new Kubectl(join(work, "host-data", "admin.kubeconfig"));
      const endpoints = JSON.parse(
        await host.ok(["-n", "team-a", "get", "endpoints", "db-x-default-x-dev", "-o", "json"]),
      );
      assert.equal(endpoints.metadata.annotations["db-host"], "db-x-default-x-dev.team-a.svc.cluster.local");
      assert.equal(endpoints.metadata.annotations.owner, "team-a (virtual cluster dev)");
      assert.equal(endpoints.metadata.labels["virtualcluster.platform.sh/managed-by"], "dev");
      assert.equal(endpoints.subsets[0].addresses[0].ip, "10.0.0.15");
      await host.ok(["-n", "team-a", "get", "service", "db-x-default-x-dev"]);
      // The Secret-reader RBAC for the shared key in its own namespace.
      await host.ok(["-n", "virtualcluster-platform", "get", "role", "vc-dev-v-team-a-platform-role"]);
    });

    it("leaves a connected context that reaches the virtual cluster through a platform-issued key", async () => {
      const user = new Kubectl(join(home, ".kube", "config"));
      assert.equal((await user.ok(["config", "current-context"])).trim(), "virtualcluster_dev_default");
      const names = await user.ok(["get", "endpoints", "db", "-o", "jsonpath={.metadata.annotations.db-host}"]);
      assert.equal(names, "db.default.svc.cluster.local", "the virtual object, unpatched");
    });

    it("registers the dedicated-key virtual cluster on the platform and connects it", async () => {
      const platform = join(work, "platform-data");
      const client = new AuthClient("https://127.0.0.1:8443", readFileSync(join(platform, "pki", "ca.crt"), "utf8"));
      const adminKey = readFileSync(join(platform, "admin-access-key"), "utf8").trim();
      const instance = await client.send("GET", `${API}/namespaces/p-default/virtualclusterinstances/web`, {
        token: adminKey,
      });
      assert.equal(instance.status, 200, instance.body);
      assert.equal(instance.json().spec.external, true);
      assert.equal(instance.json().status.online, true);
      assert.match(output, /web\s+team-b\s+running\s+\S+\s+connected \(p-default\/web\)/, "list shows it connected");
      client.agent.destroy();
    });

    it("upgrades, deletes both virtual clusters and stops the servers", async () => {
      writeFileSync(resume, "");
      await until(
        () => exitCode !== undefined,
        "the clean-up commands",
        480,
        () => undefined,
      );
      assert.equal(exitCode, 0, output);
      assert.match(output, /Updated virtual cluster dev/);
      assert.deepEqual(readdirSync(join(home, ".virtualcluster", "clusters")), []);
    });
  });
}
