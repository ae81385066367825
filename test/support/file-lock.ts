// A lock held across processes (and copies of the suite): `flock` on a file, held by a child process until released.
// Waiting for it is waiting for the condition (the other holder's end), not for a time. If this process dies, the
// child's stdin closes and the lock goes with it.

import { spawn } from "node:child_process";

/** Waits until this process holds the lock at `path`; the function returned releases it. */
export async function holdFileLock(path: string): Promise<() => void> {
  const holder = spawn("flock", [path, "sh", "-c", "echo held; exec cat > /dev/null"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once("data", () => resolve());
    holder.once("error", reject);
    holder.once("exit", (code) => reject(new Error(`flock ${path} ended (${code}) before taking the lock`)));
  });
  holder.unref();
  return () => holder.stdin.end();
}
