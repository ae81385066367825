// What `virtualcluster cluster connect NAME --host-kubeconfig FILE` does, as a library (options in, result out,
// progress through RunStep, nothing printed): set the host up for the agent (host-setup.ts, with the
// administrator's kubeconfig, used for nothing else), register the Cluster on the platform the user is logged in to
// (created, or kept when it exists), get the agent's key (clusters/NAME/accesskey: it revokes the cluster's earlier
// agent key) and write the agent's data directory. Starting the agent is the CLI's part.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { KubeObject } from "../apimachinery/types.ts";
import { ensureServingCertificates } from "../pki/tls.ts";
import { loadKubeAccess } from "../virtualcluster/kube/kube-access.ts";
import { parseKubeconfig } from "../virtualcluster/kube/kubeconfig-file.ts";
import { LifecycleError } from "../virtualcluster/lifecycle/lifecycle-error.ts";
import { API_GROUP_PATH, type PlatformClient, PlatformError } from "../virtualcluster/lifecycle/platform-client.ts";
import { type RunStep, runQuietly } from "../virtualcluster/lifecycle/run-step.ts";
import {
  type AgentConfig,
  agentKubeconfig,
  type DirectEndpointSettings,
  directEndpointHost,
  writeAgentConfig,
} from "./agent-config.ts";
import { setUpHost } from "./host-setup.ts";

export interface ConnectClusterOptions {
  name: string;
  displayName?: string;
  /** The host administrator's kubeconfig (its current context). */
  hostKubeconfig: string;
  dataDir: string;
  platform: PlatformClient;
  /** More platform addresses (replicas) the agent may dial besides the login's. */
  extraPlatforms?: string[];
  direct?: DirectEndpointSettings;
  step?: RunStep;
}

export interface ConnectClusterResult {
  kubernetesVersion: string;
  /** The Cluster existed already (this connect replaced its agent key). */
  existed: boolean;
  config: AgentConfig;
}

const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export async function connectCluster(options: ConnectClusterOptions): Promise<ConnectClusterResult> {
  const step = options.step ?? runQuietly;
  const { name, platform } = options;
  if (!CLUSTER_NAME.test(name) || name.length > 63) {
    throw new LifecycleError(
      `cluster name "${name}" must be a DNS label: lower case letters, digits and "-", at most 63`,
    );
  }
  const text = await readFile(options.hostKubeconfig, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new LifecycleError(
      `--host-kubeconfig ${options.hostKubeconfig}: ${error.code === "ENOENT" ? "no such file" : error.message}`,
    );
  });
  const { cluster } = parseKubeconfig(text, options.hostKubeconfig);
  if (!cluster) throw new LifecycleError(`${options.hostKubeconfig} has no current context with a cluster`);
  const admin = await loadKubeAccess({ file: options.hostKubeconfig });
  const host = await step(`Setting up the agent's ServiceAccount on ${cluster.server}`, () =>
    setUpHost(admin).catch((error: unknown) => {
      throw new LifecycleError(`cannot set up the host cluster at ${cluster.server}: ${(error as Error).message}`);
    }),
  ).finally(() => admin.close());

  let existed = false;
  await step(`Registering cluster ${name} on ${platform.login.host}`, async () => {
    const body: KubeObject = {
      apiVersion: "management.platform.sh/v1",
      kind: "Cluster",
      metadata: { name },
      spec: options.displayName ? { displayName: options.displayName } : {},
    };
    try {
      await platform.request("POST", `${API_GROUP_PATH}/clusters`, { body });
    } catch (error) {
      if (!(error instanceof PlatformError && error.code === 409)) throw error;
      existed = true;
    }
  });
  const key = await step("Getting the agent's access key", () =>
    platform.request<{ accessKey?: string }>("POST", `${API_GROUP_PATH}/clusters/${name}/accesskey`, {
      body: { apiVersion: "management.platform.sh/v1", kind: "ClusterAccessKey", metadata: { name } },
    }),
  );
  if (!key.accessKey) throw new LifecycleError("the platform returned no access key for the agent");

  const login = platform.login;
  const config: AgentConfig = {
    cluster: name,
    platforms: [login.host, ...(options.extraPlatforms ?? [])].map((url) => url.replace(/\/+$/, "")),
    caPem: login.certificateAuthorityData
      ? Buffer.from(login.certificateAuthorityData, "base64").toString("utf8")
      : undefined,
    insecure: login.insecure || undefined,
    direct: options.direct,
  };
  const hostKubeconfig = agentKubeconfig({
    server: cluster.server,
    caPem: cluster.ca?.toString("utf8"),
    token: host.token,
  });
  await writeAgentConfig(options.dataDir, { config, accessKey: key.accessKey, hostKubeconfig });
  if (options.direct) {
    // The direct endpoint's CA and certificate, made here so the agent need not load the certificate library.
    const advertised = directEndpointHost(options.direct);
    await ensureServingCertificates({
      dataDir: join(options.dataDir, "direct"),
      hosts: [advertised, options.direct.host],
    });
  }
  return { kubernetesVersion: host.kubernetesVersion, existed, config };
}
