// The podman command, for a virtual cluster's runtime in a container: run without a shell, its output captured, and
// its failure turned into one line that says what failed. Machine-wide podman settings (the OCI runtime, default
// ulimits) come from podman's own containers.conf, as for any podman user.

import { execFile, execFileSync } from "node:child_process";
import { LifecycleError } from "./lifecycle-error.ts";

/** The podman program: `VIRTUALCLUSTER_PODMAN` names another (a path or a wrapper), else `podman` on PATH. */
export function podmanProgram(env: NodeJS.ProcessEnv = process.env): string {
  return env.VIRTUALCLUSTER_PODMAN || "podman";
}

interface PodmanFailure {
  code?: unknown;
  message: string;
  stderr?: string | Buffer;
}

function failure(args: string[], error: PodmanFailure): LifecycleError {
  if (error.code === "ENOENT") {
    return new LifecycleError(
      `${podmanProgram()} is not installed: a virtual cluster in a container needs podman (Debian: apt-get install podman)`,
    );
  }
  const stderr = String(error.stderr ?? "").trim();
  const last =
    stderr
      .split("\n")
      .filter((line) => line.trim() !== "")
      .pop() ?? error.message;
  return new LifecycleError(`podman ${args[0]} failed: ${last.replace(/^Error: /, "")}`);
}

/** Runs podman; resolves with its standard output, or rejects with a LifecycleError naming the problem. */
export function podman(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(podmanProgram(), args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(failure(args, Object.assign(error, { stderr })));
      else resolve(stdout);
    });
  });
}

/** podman, waited for: for quick questions (`inspect`), from code that is synchronous. */
export function podmanSync(args: string[]): string {
  try {
    return execFileSync(podmanProgram(), args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    throw failure(args, error as PodmanFailure);
  }
}
