// `virtualcluster cluster connect NAME --host-kubeconfig FILE`: connects a host cluster to the platform you are
// logged in to. Sets up the agent's ServiceAccount on the host (with your kubeconfig, once), registers the Cluster,
// gets the agent's key, writes the agent's data directory and starts `virtualcluster agent` in the background
// (--no-start: run it yourself, e.g. under systemd), then waits until the platform sees the cluster online.

import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { parseDuration } from "./duration.ts";
import { PROGRAM } from "./program.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, styles, withProgress, withSpinner } from "./terminal.ts";

interface ConnectFlags {
  hostKubeconfig: string;
  dataDir?: string;
  displayName?: string;
  platform?: string[];
  directPort: number;
  directHost: string;
  directAdvertise?: string;
  direct: boolean;
  start: boolean;
  timeout?: number;
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("must be a port number (0-65535)");
  return n;
}

/** Starts `virtualcluster agent` detached (it outlives this command), its output in agent.log, its PID in agent.pid. */
async function startInBackground(dataDir: string): Promise<number> {
  const log = openSync(join(dataDir, "agent.log"), "a", 0o600);
  try {
    const child = spawn(process.execPath, [PROGRAM, "agent", "--data-dir", dataDir], {
      detached: true,
      stdio: ["ignore", log, log],
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "info" },
    });
    if (child.pid === undefined) throw new Error(`cannot start ${process.execPath}`);
    child.unref();
    await writeFile(join(dataDir, "agent.pid"), `${child.pid}\n`, { mode: 0o600 });
    return child.pid;
  } finally {
    closeSync(log);
  }
}

async function connect(name: string, flags: ConnectFlags): Promise<void> {
  const style = styles(colorEnabled(process.stderr));
  const [{ connectCluster }, { loggedInClient }, { virtualclusterHome }, { API_GROUP_PATH }] = await Promise.all([
    import("../agent/connect-cluster.ts"),
    import("./platform-session.ts"),
    import("../virtualcluster/lifecycle/virtualcluster-home.ts"),
    import("../virtualcluster/lifecycle/platform-client.ts"),
  ]);
  const client = loggedInClient();
  const dataDir = resolve(flags.dataDir ?? join(virtualclusterHome(), "agents", name));
  const result = await connectCluster({
    name,
    displayName: flags.displayName,
    hostKubeconfig: flags.hostKubeconfig,
    dataDir,
    platform: client,
    extraPlatforms: flags.platform,
    direct: flags.direct
      ? { host: flags.directHost, port: flags.directPort, advertise: flags.directAdvertise }
      : undefined,
    step: withSpinner,
  });
  process.stdout.write(
    `${style.green(result.existed ? "Reconnected" : "Connected")} cluster ${name} (Kubernetes ${result.kubernetesVersion}); agent data in ${dataDir}\n`,
  );
  if (!flags.start) {
    process.stdout.write(`Start the agent with: virtualcluster agent --data-dir ${dataDir}\n`);
    return;
  }
  const pid = await startInBackground(dataDir);
  const deadline = Date.now() + (flags.timeout ?? 120) * 1000;
  await withProgress(`Waiting for cluster ${name} to come online`, async () => {
    for (;;) {
      const cluster = await client.request<{ status?: { online?: boolean; connection?: unknown } }>(
        "GET",
        `${API_GROUP_PATH}/clusters/${name}`,
      );
      if (cluster.status?.online) return;
      if (Date.now() > deadline) {
        throw new Error(`cluster ${name} did not come online in time: see ${join(dataDir, "agent.log")}`);
      }
      await new Promise((done) => setTimeout(done, 500));
    }
  });
  process.stdout.write(
    `Agent running (PID ${pid}, log ${join(dataDir, "agent.log")}). Use the cluster with: virtualcluster connect cluster ${name}\n`,
  );
}

export function clusterCommand(): Command {
  const cluster = new Command("cluster").description("Connect host clusters to the platform");
  cluster
    .command("connect")
    .description("Connect a host cluster to the platform you are logged in to, and start its agent")
    .argument("<name>", "name of the Cluster on the platform")
    .requiredOption(
      "--host-kubeconfig <file>",
      "an administrator's kubeconfig of the host cluster (used once, kept nowhere)",
    )
    .option("--data-dir <dir>", "the agent's data directory (default: ~/.virtualcluster/agents/<name>)")
    .option("--display-name <name>", "name shown in the UI")
    .option(
      "--platform <url>",
      "another platform address the agent may use, e.g. a second replica (repeatable)",
      (url: string, urls: string[] = []) => [...urls, url],
    )
    .option("--direct-host <host>", "address the direct endpoint listens on", "0.0.0.0")
    .option("--direct-port <port>", "port of the direct endpoint (0: any free port)", port, 9443)
    .option("--direct-advertise <host:port>", "address clients reach the direct endpoint at, when it differs")
    .option("--no-direct", "serve no direct endpoint (tokens then work only through the platform)")
    .option("--no-start", "only prepare; run `virtualcluster agent --data-dir DIR` yourself")
    .option("--timeout <duration>", "how long to wait until the cluster is online (default: 2m)", parseDuration)
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster cluster connect prod --host-kubeconfig prod-admin.kubeconfig
  virtualcluster cluster connect edge --host-kubeconfig edge.kubeconfig --direct-advertise edge.example.com:9443
  virtualcluster cluster connect lab --host-kubeconfig lab.kubeconfig --data-dir ./lab-agent --no-start

Needs a login (virtualcluster platform login) with the right to create clusters. The agent dials out to the
platform (no inbound connection to the host cluster is needed) and acts on the host only through impersonation.`,
    )
    .action(runAction((name: string, flags: ConnectFlags) => connect(name, flags)));
  return cluster;
}
