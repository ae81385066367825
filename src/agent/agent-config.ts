// An agent's data directory, as `virtualcluster cluster connect` writes it and `virtualcluster agent` reads it:
//   agent.json        the cluster's name, the platform's addresses and CA, the direct endpoint's address
//   access-key        the agent's key (role agent of this cluster only), 0600
//   host.kubeconfig   the agent's ServiceAccount on its host (may only impersonate), 0600
//   keys/             the platform's signing keys and token issuers, kept for the direct endpoint
//   direct/           the direct endpoint's CA and serving certificate
//   virtualclusters/  the virtual clusters it runs (runtimes.ts)

import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

export interface DirectEndpointSettings {
  /** Address to listen on (default 0.0.0.0). */
  host: string;
  port: number;
  /** host[:port] clients use, when it differs. */
  advertise?: string;
}

export interface AgentConfig {
  cluster: string;
  /** Platform base URLs (replicas or one load balancer), tried in turn. */
  platforms: string[];
  /** PEM of the CA of the platform's serving certificate (default: the system's). */
  caPem?: string;
  insecure?: boolean;
  /** Absent: no direct endpoint. */
  direct?: DirectEndpointSettings;
}

export const AGENT_CONFIG_FILE = "agent.json";
export const ACCESS_KEY_FILE = "access-key";
export const HOST_KUBECONFIG_FILE = "host.kubeconfig";

export class AgentConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentConfigError";
  }
}

export interface LoadedAgentConfig {
  config: AgentConfig;
  accessKey: string;
  hostKubeconfig: string;
}

/** Reads an agent's data directory; the message says what is missing and how to make it. */
export async function readAgentConfig(dataDir: string): Promise<LoadedAgentConfig> {
  const file = join(dataDir, AGENT_CONFIG_FILE);
  if (!existsSync(file)) {
    throw new AgentConfigError(
      `${file} does not exist: connect the cluster first (virtualcluster cluster connect NAME --host-kubeconfig FILE --data-dir ${dataDir})`,
    );
  }
  let config: AgentConfig;
  try {
    config = JSON.parse(await readFile(file, "utf8")) as AgentConfig;
  } catch (error) {
    throw new AgentConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!config.cluster || !Array.isArray(config.platforms) || config.platforms.length === 0) {
    throw new AgentConfigError(`${file} must name the cluster and at least one platform address`);
  }
  const accessKey = (await readFile(join(dataDir, ACCESS_KEY_FILE), "utf8").catch(() => "")).trim();
  if (!accessKey) throw new AgentConfigError(`${join(dataDir, ACCESS_KEY_FILE)} holds no access key`);
  const hostKubeconfig = join(dataDir, HOST_KUBECONFIG_FILE);
  if (!existsSync(hostKubeconfig)) throw new AgentConfigError(`${hostKubeconfig} does not exist`);
  return { config, accessKey, hostKubeconfig };
}

/** Writes an agent's data directory (0700, its secrets 0600). */
export async function writeAgentConfig(
  dataDir: string,
  written: { config: AgentConfig; accessKey: string; hostKubeconfig: string },
): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  await writeFile(join(dataDir, AGENT_CONFIG_FILE), `${JSON.stringify(written.config, null, 2)}\n`, { mode: 0o600 });
  await writeFile(join(dataDir, ACCESS_KEY_FILE), `${written.accessKey}\n`, { mode: 0o600 });
  await writeFile(join(dataDir, HOST_KUBECONFIG_FILE), written.hostKubeconfig, { mode: 0o600 });
}

/** The host clients reach the direct endpoint at: the advertised one, else the listen address (this machine's name for a wildcard). */
export function directEndpointHost(settings: Pick<DirectEndpointSettings, "host" | "advertise">): string {
  if (settings.advertise) return settings.advertise.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return settings.host === "0.0.0.0" || settings.host === "::" ? hostname() : settings.host;
}

/** The agent's kubeconfig for its host: JSON (a kubeconfig like any other), so the agent never loads a YAML parser. */
export function agentKubeconfig(options: { server: string; caPem?: string; token: string }): string {
  const cluster: Record<string, string> = { server: options.server };
  if (options.caPem) cluster["certificate-authority-data"] = Buffer.from(options.caPem).toString("base64");
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "host", cluster }],
    users: [{ name: "virtualcluster-platform-agent", user: { token: options.token } }],
    contexts: [{ name: "agent", context: { cluster: "host", user: "virtualcluster-platform-agent" } }],
    "current-context": "agent",
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
