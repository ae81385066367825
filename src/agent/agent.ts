// Composition root of the cluster agent (`virtualcluster agent`): its host access (the ServiceAccount that may only
// impersonate), the forwarder to the host's API, the spaces and virtual clusters it keeps, the platform's signing
// keys, the direct endpoint (when configured) and the tunnel to the platform. Start order: host access -> what is
// already on the host (spaces, runtimes) -> kept keys -> direct endpoint -> tunnel. Close in reverse.

import { join } from "node:path";
import type { Logger } from "pino";
import { platformVersion } from "../apimachinery/version.ts";
import type { AgentInfo } from "../http/tunnel/agent-api.ts";
import { processUsage } from "../metrics/process-usage.ts";
import { exposedGc, HeapCompactor } from "../virtualcluster/heap-compactor.ts";
import { impersonating, loadKubeAccess } from "../virtualcluster/kube/kube-access.ts";
import { KubeHttp } from "../virtualcluster/kube/kube-http.ts";
import type { RuntimeContainer } from "../virtualcluster/lifecycle/runtime-container.ts";
import type { LoadedAgentConfig } from "./agent-config.ts";
import { serveStream } from "./agent-streams.ts";
import { ClusterPrometheus } from "./cluster-prometheus.ts";
import { type RunningDirectEndpoint, startDirectEndpoint } from "./direct-endpoint.ts";
import type { HelmBinary } from "./helm.ts";
import { HelmReleases } from "./helm-releases.ts";
import { HostForwarder } from "./host-forwarder.ts";
import { AGENT_USER } from "./host-rbac.ts";
import { PlatformKeys } from "./platform-keys.ts";
import { type PlatformEndpoint, Runtimes } from "./runtimes.ts";
import { Spaces } from "./spaces.ts";
import { TokenReviews } from "./token-reviews.ts";
import { TunnelClient, type TunnelState } from "./tunnel-client.ts";

export interface AgentOptions extends LoadedAgentConfig {
  dataDir: string;
  /** The `virtualcluster` program's entry script (the runtimes it starts). */
  program: string;
  /** Set: the virtual clusters placed here run in containers of this image (podman). */
  runtimeContainer?: RuntimeContainer;
  /** The helm apps are installed with (findHelm()); absent: the platform shows users the command instead. */
  helm?: HelmBinary;
  /** The Prometheus the cluster's metrics run in while cost control is on (default `prometheus` on PATH). */
  prometheusBinary?: string;
  pingIntervalMs?: number;
  logger?: Logger;
}

export interface RunningAgent {
  tunnel(): TunnelState;
  directEndpoint?: { url: string; caPem: string };
  close(): Promise<void>;
}

export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const { config, logger } = options;
  const host = await loadKubeAccess({ file: options.hostKubeconfig });
  const own = new KubeHttp(impersonating(host, { user: AGENT_USER }), { userAgent: "virtualcluster-agent" });
  const forwarder = new HostForwarder(host);
  const spaces = new Spaces(own);
  await spaces.load().catch((error) => logger?.warn({ err: String(error) }, "reading the spaces on the host failed"));
  let platform: PlatformEndpoint | undefined;
  const runtimes = new Runtimes({
    dir: join(options.dataDir, "virtualclusters"),
    program: options.program,
    container: options.runtimeContainer,
    hostKubeconfig: options.hostKubeconfig,
    http: own,
    platform: () => platform,
    logger,
  });
  await runtimes.load();
  const apps = new HelmReleases({
    dir: join(options.dataDir, "helm-releases"),
    helm: options.helm,
    hostKubeconfig: options.hostKubeconfig,
    http: own,
    virtualClusters: runtimes,
    isSpace: (namespace) => spaces.all().some((space) => space.namespace === namespace),
    logger,
  });
  const metrics = new ClusterPrometheus({
    cluster: config.cluster,
    dir: join(options.dataDir, "prometheus"),
    binary: options.prometheusBinary,
    virtualClusters: () => runtimes.scrapeTargets(),
    apiRequests: () => forwarder.requests,
    logger,
  });
  // Not awaited: Prometheus takes a while to be ready, and the tunnel should not wait for it.
  void metrics.load().catch((error) => logger?.warn({ err: String(error) }, "starting the cluster's metrics failed"));
  const keys = new PlatformKeys(join(options.dataDir, "keys"), logger);
  await keys.load();

  let connectedTo: string | undefined;
  const reviews = new TokenReviews({
    url: () => connectedTo,
    caPem: config.caPem,
    insecure: config.insecure === true,
    accessKey: options.accessKey,
  });
  let direct: RunningDirectEndpoint | undefined;
  if (config.direct) {
    direct = await startDirectEndpoint({
      cluster: config.cluster,
      dir: join(options.dataDir, "direct"),
      host: config.direct.host,
      port: config.direct.port,
      advertise: config.direct.advertise,
      verify: (token) => keys.verify(token),
      refusal: (token, digest) => reviews.refusal(token, digest),
      spaceNamespace: (project, space) => spaces.namespaceOf(project, space),
      spaces: () => spaces.all(),
      forwarder,
      logger,
    });
  }

  const info = async (): Promise<AgentInfo> => {
    const version = await own.request<{ gitVersion?: string }>({ method: "GET", path: "/version" });
    return {
      kubernetesVersion: version.gitVersion,
      agentVersion: platformVersion().gitVersion,
      directEndpoint: direct && { url: direct.url, certificateAuthority: direct.caPem },
      spaces: spaces.names(),
      virtualClusters: runtimes.names(),
      usage: { ...processUsage(), apiRequests: forwarder.requests },
      helmVersion: options.helm?.version,
      metrics: metrics.state(),
    };
  };

  const tunnel = new TunnelClient({
    cluster: config.cluster,
    urls: config.platforms,
    caPem: config.caPem,
    insecure: config.insecure === true,
    accessKey: options.accessKey,
    pingIntervalMs: options.pingIntervalMs,
    onStream: (stream, headers) =>
      serveStream(stream, headers, { info, spaces, runtimes, apps, metrics, forwarder, logger }),
    // The platform no longer takes this agent (its key revoked, its cluster deleted): the cluster's metrics stop;
    // the platform starts them again once it takes the agent back and cost control is on.
    onRefused: (code) => {
      if (code === 401 || code === 403 || code === 404) void metrics.delete();
    },
    onConnected: (url, issuer) => {
      connectedTo = url;
      platform = { host: new URL(url).host, caPem: config.caPem, insecure: config.insecure === true };
      void keys.connected({ url, caPem: config.caPem, insecure: config.insecure === true }, issuer);
    },
    logger,
  });
  tunnel.start();
  // Start-up garbage, and each burst's, goes back to the system once the agent is quiet.
  const gc = exposedGc();
  const compactor = gc && new HeapCompactor({ gc, work: () => forwarder.forwarded });
  compactor?.start();

  return {
    tunnel: () => tunnel.state(),
    directEndpoint: direct && { url: direct.url, caPem: direct.caPem },
    async close() {
      compactor?.stop();
      await tunnel.close();
      await direct?.close();
      await apps.close();
      await metrics.close();
      await runtimes.close();
      own.close();
      forwarder.close();
      host.close();
    },
  };
}
