// client-node (what users' programs run) with one connection pool per client: the benchmarks' load generators, and
// tests that poll an API server often.

import {
  CoreV1Api,
  createConfiguration,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
  ServerConfiguration,
} from "@kubernetes/client-node";

type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;

/** One API server's clients, sharing one connection pool. */
export interface KubeClient {
  core: CoreV1Api;
  /** A KubeConfig for informers (watches) whose requests use the shared pool. */
  watchConfig: KubeConfig;
  /** Closes the pooled connections (watches included). */
  close(): Promise<void>;
}

/**
 * client-node builds a new connection pool (and so a new TLS handshake) for every request. This wraps the
 * KubeConfig's authentication so every request and watch of one client shares the first pool instead; credentials
 * are still applied per request by the KubeConfig itself.
 */
export function createKubeClient(kubeConfig: KubeConfig): KubeClient {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error("the kubeconfig has no current cluster");
  let pool: Dispatcher | undefined;
  const authentication: SecurityAuthentication = {
    getName: () => "pooled-kubeconfig",
    async applySecurityAuthentication(context: RequestContext) {
      await kubeConfig.applySecurityAuthentication(context);
      const fresh = context.getDispatcher();
      if (!fresh) return;
      pool ??= fresh;
      context.setDispatcher(pool);
    },
  };
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: authentication },
  });
  const watchConfig = Object.create(kubeConfig, {
    applySecurityAuthentication: { value: authentication.applySecurityAuthentication },
  }) as KubeConfig;
  return {
    core: new CoreV1Api(configuration),
    watchConfig,
    async close() {
      const current = pool as (Dispatcher & { destroy?: () => Promise<void> }) | undefined;
      pool = undefined;
      await current?.destroy?.();
    },
  };
}
