// Containers in tests: whether podman can run them here (else a visible skip reason), the podman settings this kind of
// machine needs, the image (built once per change of its inputs and shared by every container test file, through a
// lock), and the containers and volumes a test makes, removed after it.
//
// The settings go in a containers.conf named by CONTAINERS_CONF, which every podman the tests start reads (the
// `virtualcluster create --container` under test too): the OCI runtime runc (crun refuses hybrid cgroups) and
// explicit ulimits within this machine's limits (podman's defaults exceed them, and runc then fails to set them).

import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuiltImage } from "../../container/build-image.ts";
import { runTool } from "../../container/run-tool.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

const onPath = (program: string) => spawnSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" }).status === 0;

/** Why the container tests cannot run here, or false when they can. */
export function containersMissing(): string | false {
  if (process.platform !== "linux") return "containers run on Linux only";
  const missing = ["podman", "runc", "mmdebstrap", "strip", "flock"].filter((program) => !onPath(program));
  if (missing.length > 0) {
    return `${missing.join(", ")} not installed (apt-get install podman runc mmdebstrap binutils; .ci/run installs them)`;
  }
  if (process.getuid?.() !== 0) return "the container tests run rootful podman: run them as root (CI does)";
  const info = spawnSync("podman", ["info", "--format", "{{.Host.OCIRuntime.Name}}"], {
    encoding: "utf8",
    env: podmanEnv(),
  });
  if (info.status !== 0) return `podman cannot run here: ${info.stderr.trim().split("\n").pop()}`;
  return false;
}

/** The hard limit of a resource from /proc/self/limits (e.g. "Max open files"), or undefined. */
function hardLimit(name: string): number | undefined {
  const line = readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((row) => row.startsWith(name));
  const value = line?.slice(name.length).trim().split(/\s+/)[1];
  return value && /^\d+$/.test(value) ? Number(value) : undefined;
}

function containersConf(): string {
  const nofile = Math.min(hardLimit("Max open files") ?? 1024, 1_048_576);
  // Above kernel.pid_max runc cannot set it; a server has a few dozen threads.
  const nproc = Math.min(hardLimit("Max processes") ?? 4096, 4096);
  return (
    "# Written by test/support/containers.ts for the container tests.\n" +
    `[containers]\ndefault_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]\n` +
    '[engine]\nruntime = "runc"\n'
  );
}

let confPath: string | undefined;

/** The environment for podman (and programs that run it): CONTAINERS_CONF with this machine's settings. */
export function podmanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  if (!confPath) {
    const text = containersConf();
    confPath = join(
      tmpdir(),
      `virtualcluster-containers-${createHash("sha256").update(text).digest("hex").slice(0, 12)}.conf`,
    );
    if (!existsSync(confPath)) {
      const temporary = `${confPath}.${process.pid}`;
      writeFileSync(temporary, text);
      renameSync(temporary, confPath);
    }
  }
  return { ...process.env, CONTAINERS_CONF: confPath, ...extra };
}

/** Runs podman; resolves with its standard output, rejects with its error output. */
export function podman(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("podman", args, { env: podmanEnv(), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`podman ${args.join(" ")} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
  });
}

let image: Promise<BuiltImage> | undefined;

/** The lock every image build of the tests takes (one build at a time on the machine, whichever checkout). */
export const IMAGE_LOCK = join(tmpdir(), "virtualcluster-platform-image.lock");

/**
 * The image of this checkout: `npm run image` under IMAGE_LOCK, so test files running at once (and other checkouts)
 * build it once; when an image of the same inputs exists it is reused.
 */
export function testImage(): Promise<BuiltImage> {
  image ??= runTool("flock", [IMAGE_LOCK, process.execPath, join(REPO, "container", "build-image.ts"), "--json"], {
    cwd: REPO,
    env: podmanEnv(),
  }).then((stdout) => JSON.parse(stdout.trim().split("\n").pop() ?? "") as BuiltImage);
  return image;
}

/** Containers and volumes one test file makes, with names of its own; removeAll() removes them. */
export class TestContainers {
  private readonly prefix = `vcp-test-${process.pid}-${Date.now().toString(36)}`;
  private count = 0;
  private readonly containers = new Set<string>();
  private readonly volumes = new Set<string>();

  /** A new name for a container or volume of this file. */
  name(what: string): string {
    return `${this.prefix}-${what}-${++this.count}`;
  }

  async volume(what: string): Promise<string> {
    const name = this.name(what);
    await podman(["volume", "create", name]);
    this.volumes.add(name);
    return name;
  }

  /** The host path of a named volume (rootful podman). */
  async volumePath(volume: string): Promise<string> {
    return (await podman(["volume", "inspect", "--format", "{{.Mountpoint}}", volume])).trim();
  }

  /** `podman run --detach --name <new name> <args>`; resolves with the name. */
  async run(what: string, args: string[]): Promise<string> {
    const name = this.name(what);
    this.containers.add(name);
    await podman(["run", "--detach", `--name=${name}`, ...args]);
    return name;
  }

  /** What the container wrote: standard output, then standard error (podman logs keeps them apart). */
  logs(name: string): Promise<string> {
    return new Promise((resolve) => {
      execFile("podman", ["logs", name], { env: podmanEnv(), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
        resolve(error ? `${stdout}${stderr}${error.message}` : `${stdout}${stderr}`),
      );
    });
  }

  /** The container's state: running, its exit code. */
  async state(name: string): Promise<{ running: boolean; exitCode: number }> {
    const [running, exitCode] = (await podman(["inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", name]))
      .trim()
      .split(" ");
    return { running: running === "true", exitCode: Number(exitCode) };
  }

  async removeAll(): Promise<void> {
    if (this.containers.size > 0) {
      await podman(["rm", "--force", "--volumes", "--time=5", "--ignore", ...this.containers]).catch(() => undefined);
    }
    for (const volume of this.volumes) await podman(["volume", "rm", "--force", volume]).catch(() => undefined);
  }
}
