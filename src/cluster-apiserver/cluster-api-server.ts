// A cluster API server: the generic machinery serving core/v1, discovery.k8s.io/v1 and rbac.authorization.k8s.io/v1
// over HTTPS, with embedded storage in a data directory. It is the virtual cluster's control plane (`virtualcluster
// run`) and the stand-alone host cluster (`virtualcluster apiserver`). It keeps the default namespaces, the default
// RBAC roles and `default/kubernetes` (describing itself, Endpoints and EndpointSlice), runs the namespace controller,
// the EndpointSlice mirroring controller and the garbage collector, and writes <data-dir>/admin.kubeconfig with its
// CA and admin token.

import { lookup } from "node:dns/promises";
import { writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import type { Registry as PromRegistry } from "prom-client";
import { isStatusError } from "../apimachinery/errors.ts";
import { platformVersion } from "../apimachinery/version.ts";
import { ServiceAddresses } from "../apis/core/v1/service-addresses.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import type { Authenticator } from "../auth/types.ts";
import { startApiServer } from "../http/api-server.ts";
import { createApiMetrics } from "../http/metrics.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import type { ApiServerHooks } from "../http/types.ts";
import { buildKubeconfig, serverUrl } from "../pki/kubeconfig.ts";
import { ensureServingCertificates } from "../pki/tls.ts";
import { GarbageCollector } from "../registry/garbage-collector.ts";
import { Registry } from "../registry/registry.ts";
import { GenericStore } from "../registry/store.ts";
import { systemContext } from "../registry/system-context.ts";
import type { ResourceStore } from "../registry/types.ts";
import { ensureDataDirectory } from "../storage/data-directory.ts";
import { instrumentStore } from "../storage/instrumented-store.ts";
import { RetentionCompaction } from "../storage/retention-compaction.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { AdminTokenAuthenticator, ensureAdminToken } from "./admin-token.ts";
import { bootstrapRbac } from "./bootstrap-rbac.ts";
import { ClientCertificateAuthenticator } from "./client-certificate-authenticator.ts";
import { clusterResources } from "./cluster-resources.ts";
import { EndpointSliceMirroring } from "./endpointslice-mirroring.ts";
import { combineHandlers, serviceAddressHandler } from "./informer-handlers.ts";
import { KubernetesServiceReconciler } from "./kubernetes-service.ts";
import { NamespaceController } from "./namespace-controller.ts";
import { namespaceStore } from "./namespace-store.ts";
import { RbacAuthorizer } from "./rbac/rbac-authorizer.ts";
import { RbacIndex } from "./rbac/rbac-index.ts";
import { ServiceAccountTokens } from "./service-account-tokens.ts";

export const CLUSTER_ADMIN_KUBECONFIG = "admin.kubeconfig";
export const CLUSTER_DATABASE = "cluster.db";
export const DEFAULT_CLUSTER_PORT = 6443;
const DEFAULT_NAME = "virtualcluster-apiserver";
const DEFAULT_NAMESPACES = ["default", "kube-system", "kube-public"];

export interface ClusterApiServerOptions {
  dataDir: string;
  /** Address to listen on and to put in certificates and the kubeconfig. Default 127.0.0.1. */
  host?: string;
  /** 0 = ephemeral. Default 6443. */
  port?: number;
  /** Kubeconfig context (and cluster) name. Default virtualcluster-apiserver. */
  name?: string;
  /** Tried after the admin token and client certificates (the admin token is never handed to them). */
  authenticators?: Authenticator[];
  /** PEMs; client certificates verified against them authenticate as CN=user, O=groups. */
  clientCertificateAuthorities?: string[];
  /** Groups added to every client-certificate user (e.g. system:masters when only a trusted issuer signs). */
  clientCertificateGroups?: string[];
  /** Prometheus registry its /metrics serves (default: its own); an embedding process may add its series to it. */
  metricsRegistry?: PromRegistry;
  /** Connection timeouts and in-flight limits of its API server (unset ones: DEFAULT_SERVER_LIMITS). */
  limits?: Partial<ServerLimits>;
  /** Audit hooks (a virtual cluster's audit log). */
  hooks?: ApiServerHooks;
  logger?: Logger;
}

export interface RunningClusterApiServer {
  url: string;
  port: number;
  caPem: string;
  kubeconfigPath: string;
  registry: Registry;
  /** Replaces the trusted client CAs (new TLS connections at once; open ones on their next request). */
  setClientCertificateAuthorities(pems: string[]): void;
  close(): Promise<void>;
}

export async function startClusterApiServer(options: ClusterApiServerOptions): Promise<RunningClusterApiServer> {
  const { logger } = options;
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? "127.0.0.1";
  await ensureDataDirectory(dataDir);

  const metrics = createApiMetrics(options.metricsRegistry);
  // The WAL's fsync runs on the thread pool: writes are still acknowledged only once durable, but a virtual
  // cluster's syncer, which shares this process, keeps working while the disk syncs. Checkpoints, which still block
  // the loop for their copy and two fsyncs, come at most once a second (or every 10,000 rows) instead of every
  // 250 ms. Smaller caches than the platform's: a virtual cluster's runtime is meant to fit in little memory, and
  // the OS caches the file anyway.
  const store = await openSqliteStore({
    path: join(dataDir, CLUSTER_DATABASE),
    fsync: "thread-pool",
    checkpoint: { intervalMs: 1_000, maxRows: 10_000 },
    pageCacheBytes: 8 * 1024 * 1024,
    readCacheBytes: 4 * 1024 * 1024,
  });
  const storage = instrumentStore(store, (op, r, ok, s) => metrics.storageOperation(op, r, ok, s));
  const stops: (() => void | Promise<void>)[] = [() => storage.close()];
  // As the platform does (without a leader: one process owns the file): every minute, drop history older than five
  // minutes; the SQLite store then returns the freed pages by itself.
  const compaction = new RetentionCompaction({ storage, retentionMs: 5 * 60_000 });
  const compactor = setInterval(() => {
    compaction.tick().catch((error) => logger?.warn({ err: String(error) }, "compaction failed"));
  }, 60_000);
  compactor.unref();
  stops.push(() => clearInterval(compactor));
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    const addresses = new ServiceAddresses();
    const rbac = new RbacIndex();
    const registry = new Registry(storage);
    const tokens = await ServiceAccountTokens.open(dataDir, registry);
    for (const definition of clusterResources(
      addresses,
      storage,
      (kind, name, namespace) => rbac.roleRules(kind, name, namespace),
      tokens.tokenRequest(),
    )) {
      registry.register(definition);
    }

    const namespaces = new NamespaceController(registry, logger);
    const kubernetesService = new KubernetesServiceReconciler({
      registry,
      clusterIP: addresses.firstAddress,
      logger,
    });
    const mirroring = new EndpointSliceMirroring({ registry, logger });
    const informer = new StoreInformer(
      storage,
      combineHandlers([rbac, serviceAddressHandler(addresses), namespaces, kubernetesService, mirroring]),
      (error) => logger?.error({ err: String(error) }, "cluster state index update failed"),
    );
    await informer.start();
    mirroring.start();
    stops.push(
      () => informer.stop(),
      () => namespaces.stop(),
      () => kubernetesService.stop(),
      () => mirroring.stop(),
    );
    const collector = new GarbageCollector({
      registry,
      onError: (error, key) => logger?.warn({ key, err: String(error) }, "garbage collection failed"),
    });
    await collector.start();
    stops.push(() => collector.stop());

    await ensureNamespaces(registry);
    await bootstrapRbac(registry);

    const address = await advertiseAddress(host);
    const tls = await ensureServingCertificates({
      dataDir,
      hosts: [host, address, addresses.firstAddress, "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
    });
    const token = await ensureAdminToken(dataDir);
    const certificates = new ClientCertificateAuthenticator(options.clientCertificateAuthorities ?? [], {
      extraGroups: options.clientCertificateGroups,
    });
    const server = await startApiServer({
      resources: servedStores(registry),
      // The admin token is checked first so it never reaches an authenticator that might send it elsewhere.
      authenticators: [
        new AdminTokenAuthenticator(token),
        certificates,
        tokens.authenticator(),
        ...(options.authenticators ?? []),
      ],
      authorizer: new RbacAuthorizer(rbac, () => informer.fresh()),
      tls: {
        certPem: tls.certPem,
        keyPem: tls.keyPem,
        clientCaPem: joinPems(options.clientCertificateAuthorities),
        requestClientCertificates: true,
      },
      host,
      port: options.port ?? DEFAULT_CLUSTER_PORT,
      version: platformVersion(),
      logger,
      metrics,
      limits: options.limits,
      hooks: options.hooks,
      // Failing while writes fail for lack of space (they answer 507 meanwhile).
      healthChecks: { "store-space": () => storage.checkSpace?.() },
    });
    stops.push(() => server.close());

    const url = serverUrl(host, server.port);
    await kubernetesService.start(address, server.port);
    const kubeconfigPath = join(dataDir, CLUSTER_ADMIN_KUBECONFIG);
    const name = options.name ?? DEFAULT_NAME;
    await writeFile(
      kubeconfigPath,
      buildKubeconfig({
        name,
        server: url,
        certificateAuthorityPem: tls.caPem,
        user: { token },
        userName: `${name}-admin`,
      }),
      { mode: 0o600 },
    );
    logger?.info({ url }, "cluster API server ready");

    let closed: Promise<void> | undefined;
    return {
      url,
      port: server.port,
      caPem: tls.caPem,
      kubeconfigPath,
      registry,
      setClientCertificateAuthorities(pems) {
        certificates.setAuthorities(pems);
        server.setClientCaPem(joinPems(pems));
      },
      close() {
        closed ??= stopAll();
        return closed;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The stores served over HTTP: namespaces get kube-apiserver's delete (marked Terminating, then emptied). */
function servedStores(registry: Registry): ResourceStore[] {
  return registry
    .stores()
    .map((store) =>
      store instanceof GenericStore && store.definition.group === "" && store.definition.plural === "namespaces"
        ? namespaceStore(store)
        : store,
    );
}

function joinPems(pems: string[] | undefined): string | undefined {
  const joined = (pems ?? [])
    .map((pem) => pem.trim())
    .filter(Boolean)
    .join("\n");
  return joined ? `${joined}\n` : undefined;
}

async function ensureNamespaces(registry: Registry): Promise<void> {
  const store = registry.genericStore("", "namespaces");
  if (!store) return;
  const context = systemContext("system:apiserver", "kube-apiserver");
  for (const name of DEFAULT_NAMESPACES) {
    try {
      await store.create(context, undefined, { apiVersion: "v1", kind: "Namespace", metadata: { name } }, {});
    } catch (error) {
      if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
    }
  }
}

/** The address `default/kubernetes` Endpoints carry: the listen address, or for a wildcard one a real interface. */
async function advertiseAddress(host: string): Promise<string> {
  if (host === "0.0.0.0" || host === "::") {
    for (const entries of Object.values(networkInterfaces())) {
      for (const entry of entries ?? []) if (entry.family === "IPv4" && !entry.internal) return entry.address;
    }
    return "127.0.0.1";
  }
  if (isIP(host)) return host;
  try {
    return (await lookup(host)).address;
  } catch {
    return "127.0.0.1";
  }
}
