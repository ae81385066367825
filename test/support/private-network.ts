// A network of a test's own: a test that must use fixed ports (a README walkthrough run exactly as written), or a
// browser test that must not see the machine's interfaces change, runs its file again inside a new network namespace
// with only loopback up (`unshare --user --map-root-user --net`, which needs no privileges where user namespaces are
// enabled), so a platform the user already runs on 8443, another copy of the suite, or a podman bridge coming and going
// cannot be in its way. Where the machine gives no namespace, the file runs as it is.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { describe, it, type SuiteContext } from "node:test";

/** Each test's bound in a file run again inside a namespace: the suite's own (`--test-timeout` in package.json). */
const INNER_TEST_TIMEOUT_MS = 600_000;
const WHOLE_FILE_TIMEOUT_MS = 3_600_000;

/** Set in the environment of a test file run again inside its own namespace. */
const INSIDE = "VCP_TEST_PRIVATE_NETWORK";

const IP_COMMANDS = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"];

function ipCommand(): string | undefined {
  return IP_COMMANDS.find((path) => existsSync(path));
}

/** The command line that runs `command` in a new network namespace with loopback up. */
function namespaced(command: string, args: readonly string[]): string[] {
  const ip = ipCommand() ?? "ip";
  return [
    "--user",
    "--map-root-user",
    "--net",
    "--",
    "sh",
    "-c",
    `${ip} link set lo up && exec "$@"`,
    "sh",
    command,
    ...args,
  ];
}

let availability: string | undefined | null = null;

/** Why no network namespace can be made here, or undefined when one can. */
export function privateNetworkUnavailable(): string | undefined {
  if (availability !== null) return availability;
  if (!ipCommand()) availability = "no `ip` command (iproute2) to bring up loopback";
  else {
    const probe = spawnSync("unshare", namespaced("true", []), { encoding: "utf8" });
    availability =
      probe.status === 0 ? undefined : `unshare --user --net failed: ${(probe.stderr || String(probe.error)).trim()}`;
  }
  return availability;
}

/** True in a test file that runs inside a network namespace of its own. */
export function insidePrivateNetwork(): boolean {
  return process.env[INSIDE] === "1";
}

/**
 * One test that runs `file` (a test file's import.meta.url) again, inside a network namespace of its own, and passes
 * when every test of it passes; on failure its whole output is the message.
 */
export function runFileInPrivateNetwork(file: string, name: string, options: { skip?: string }): void {
  // The whole file gets an hour, each of its tests the suite's own bound inside (INNER_TEST_TIMEOUT_MS): a slow but
  // passing file is not cut off at one test's bound, and a failing one still reports its output. (`timeout: Infinity`
  // would mean the runner's --test-timeout, not none.)
  it(`${name} (in a network namespace of its own)`, {
    skip: options.skip,
    timeout: WHOLE_FILE_TIMEOUT_MS,
  }, async (t) => {
    const path = new URL(file).pathname;
    // A test runner of its own (without the parent's NODE_TEST_CONTEXT, which would make it skip the file).
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = spawn(
      "unshare",
      namespaced(process.execPath, ["--test", "--test-reporter=spec", `--test-timeout=${INNER_TEST_TIMEOUT_MS}`, path]),
      {
        env: { ...env, [INSIDE]: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    assert.equal(code, 0, output);
    assert.match(output, /ℹ pass [1-9]/, output);
    assert.match(output, /ℹ fail 0/, output);
    // The inner run's counts in the parent's report, so a skip inside is not hidden behind one pass.
    for (const line of output.match(/^ℹ (tests|pass|skipped) \d+$/gm) ?? []) t.diagnostic(`inside: ${line.slice(2)}`);
  });
}

/**
 * `describe(name, options, body)` for a browser test file: where a namespace can be made, the file runs again inside
 * one of its own (the platform, its providers and Chromium all on that loopback), as one test of the parent run.
 * Chromium aborts every request in flight with ERR_NETWORK_CHANGED when the machine's interfaces change, and the
 * container tests' podman bridges (in this suite or a copy beside it) change them; in its own namespace Chromium sees
 * only loopback. Where no namespace can be made the suite runs here, exposed to that.
 */
export function describeInPrivateNetwork(
  file: string,
  name: string,
  options: { skip?: string | false; timeout?: number },
  body: (suite: SuiteContext) => void,
): void {
  if (insidePrivateNetwork() || privateNetworkUnavailable() !== undefined) describe(name, options, body);
  else runFileInPrivateNetwork(file, name, { skip: options.skip || undefined });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Why the walkthrough cannot run here as written (ports in use and no namespace to escape to), or undefined. */
export async function fixedPortsBusy(ports: readonly number[], why: string): Promise<string | undefined> {
  const busy: number[] = [];
  for (const port of ports) if (!(await portFree(port))) busy.push(port);
  if (busy.length === 0) return undefined;
  return `port ${busy.join(" and ")} in use (a platform of yours?) and no network namespace here (${why}): stop it to run this test`;
}
