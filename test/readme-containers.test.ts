// The README's "Run as containers", run exactly as written: `npm run image` in the checkout, then the other shell
// blocks in bash, in a temporary HOME and working directory, with `virtualcluster` on the PATH as the package's bin
// and this machine's podman settings in CONTAINERS_CONF (the section's containers.conf). The containers keep the
// names the README gives them: the test skips, saying why, when one exists or a port it names is in use, and removes
// them after. Another copy of the suite running this file at the same time is waited for (a lock file), so the two
// neither skip nor collide.

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { etcdMissing } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { clusterPaths } from "../src/virtualcluster/lifecycle/local-clusters.ts";
import { runtimeContainerName } from "../src/virtualcluster/lifecycle/runtime-container.ts";
import { containersMissing, IMAGE_LOCK, podman, podmanEnv } from "./support/containers.ts";
import { holdFileLock } from "./support/file-lock.ts";
import { kubectlSkip } from "./support/kubectl.ts";
import { fixedPortsBusy } from "./support/private-network.ts";
import { readmeSection, runnableBlocks, scriptOf } from "./support/readme-blocks.ts";
import { installProgram } from "./support/readme-run.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const SECTION = readmeSection(readFileSync(join(REPO, "README.md"), "utf8"), "Run as containers");
const CONTAINERS = ["vc-platform", "vc-host", "vc-replica-1", "vc-replica-2"];
const PORTS = [9443, 9444, 7543, 2479, 2480];
const BUILD = "npm run image";

/** Runs a bash script to its end: exit code and everything it printed. */
function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<{ code: number | null; output: string }> } {
  // Its own process group: what it starts in the background (etcd) is stopped with it.
  const child = spawn("bash", ["-c", script], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  return { child, done: new Promise((resolve) => child.once("close", (code) => resolve({ code, output }))) };
}

/**
 * Why the section cannot run here as written: the ports it names are in use, or containers with its names exist.
 * Rootful podman runs in the machine's own network, so no private namespace can take it out of their way.
 */
async function inTheWay(): Promise<string | false> {
  const busy = await fixedPortsBusy(PORTS, "rootful podman runs in the machine's own network");
  if (busy) return busy;
  const taken = CONTAINERS.filter((name) => spawnSync("podman", ["container", "exists", name]).status === 0);
  if (taken.length === 0) return false;
  return `containers ${taken.join(", ")} exist and the section makes its own: remove them to run this test`;
}

const cannotRun = containersMissing() || etcdMissing() || kubectlSkip;
// The section's names and ports are fixed: one copy of the suite at a time runs it.
const releaseLock = cannotRun
  ? undefined
  : await holdFileLock(join(tmpdir(), "virtualcluster-platform-readme-containers.lock"));
const skip = cannotRun || (await inTheWay());
if (skip) releaseLock?.();

describe("README: Run as containers", { skip, timeout: 900_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), "vc-readme-containers-"));
  const home = join(root, "home");
  const work = join(root, "work");
  let shell: ChildProcess | undefined;
  let result: { code: number | null; output: string };

  before(
    async () => {
      const bin = join(root, "bin");
      for (const dir of [home, work, bin]) mkdirSync(dir, { recursive: true });
      installProgram(bin);
      const env = podmanEnv({ HOME: home, PATH: `${bin}:${process.env.PATH}` });
      for (const name of ["VIRTUALCLUSTER_HOME", "KUBECONFIG", "LICENSE", "NO_COLOR"]) delete env[name];

      const [build, ...rest] = runnableBlocks(SECTION);
      assert.equal(build.text.split("#")[0].trim(), BUILD, "the section starts by building the image");
      // In the checkout, as the README says; under the lock the other container tests take (one build at a time).

      const built = await bash(`flock '${IMAGE_LOCK}' ${BUILD}`, REPO, {
        ...process.env,
        CONTAINERS_CONF: env.CONTAINERS_CONF,
      }).done;
      assert.equal(built.code, 0, built.output);
      const run = bash(`set -euo pipefail\n${scriptOf(rest)}`, work, env);
      shell = run.child;
      result = await run.done;
    },
    { timeout: 900_000 },
  );

  after(async () => {
    if (shell?.pid !== undefined) {
      try {
        process.kill(-shell.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    const runtime = runtimeContainerName(
      { name: "web", namespace: "team-b" },
      clusterPaths("team-b", "web", join(home, ".virtualcluster")),
    );
    await podman(["rm", "--force", "--volumes", "--time=5", "--ignore", ...CONTAINERS, runtime]).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
    // The next copy of the suite checks these ports once it has the lock: hand it over once what ran here let go of
    // them (they were free when this began; a minute bounds a port something else took meanwhile).
    for (let i = 0; i < 300 && (await fixedPortsBusy(PORTS, "")); i++) await new Promise((r) => setTimeout(r, 200));
    releaseLock?.();
  });

  it("runs to the end", () => {
    assert.equal(result.code, 0, result.output);
  });

  it("logs in from the host with the kubeconfig the platform container wrote", () => {
    assert.match(result.output, /^admin\s+admin\s/m);
  });

  it("runs the virtual cluster's control plane in a container that syncs the Endpoints to the host", () => {
    assert.match(result.output, /Created virtual cluster web in namespace team-b/);
    assert.match(
      result.output,
      /Container: virtualcluster-team-b-web-[0-9a-f]{8} \(localhost\/virtualcluster-platform:/,
    );
    assert.match(result.output, /endpoints\/db-x-default-x-web condition met/);
  });

  it("keeps the data on the volume across a restart, and serves it from both replicas on etcd", () => {
    const instances = result.output.match(/^web\s/gm) ?? [];
    assert.equal(instances.length, 2, `the instance, after the restart and through replica 2:\n${result.output}`);
    assert.match(result.output, /Deleted virtual cluster web in namespace team-b/);
  });
});
