// The platform (or another long-running command of the image) in a container on the host's network, on a free port,
// its data directory a named volume: started, and waited for until it says where it listens.

import { podman, type TestContainers } from "./containers.ts";

export const DATA_DIR = "/var/lib/virtualcluster";

export interface StartedContainer {
  name: string;
  /** The URL it printed ("listening on <url>"). */
  url: string;
}

/**
 * Waits until the container's output matches `pattern`; fails at once when the container exits first. The limit only
 * ends a wait that will never pass: on a loaded machine a start may take minutes.
 */
export async function waitForOutput(
  containers: TestContainers,
  name: string,
  pattern: RegExp,
  seconds = 300,
): Promise<RegExpExecArray> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const logs = await containers.logs(name);
    const match = pattern.exec(logs);
    if (match) return match;
    const state = await containers.state(name);
    if (!state.running) throw new Error(`container ${name} exited (${state.exitCode}) before ${pattern}:\n${logs}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} from ${name}:\n${logs}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `platform start` in a container with `volume` as its data directory, read-only root, the host's network, port 0. */
export async function startPlatformContainer(
  containers: TestContainers,
  image: string,
  volume: string,
  extraArgs: string[] = [],
): Promise<StartedContainer> {
  const name = await containers.run("platform", [
    "--network=host",
    "--read-only",
    `--volume=${volume}:${DATA_DIR}`,
    image,
    ...["platform", "start", "--data-dir", DATA_DIR, "--port", "0", ...extraArgs],
  ]);
  const [, url] = await waitForOutput(containers, name, /Platform listening on (https:\/\/\S+)/);
  return { name, url };
}

/** `podman stop` (SIGTERM, SIGKILL after `seconds`); resolves with the exit code. */
export async function stopContainer(containers: TestContainers, name: string, seconds = 60): Promise<number> {
  await podman(["stop", `--time=${seconds}`, name]);
  return (await containers.state(name)).exitCode;
}
