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
import { type ApiMetrics, createApiMetrics } from "../http/metrics.ts";
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
import type { KeyValueStore } from "../storage/types.ts";
import { AdminTokenAuthenticator, CLUSTER_ADMIN_KUBECONFIG, ensureAdminToken } from "./admin-token.ts";
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
  /** TEST-ONLY FAULT SEAM: called before each step of the start; a throw fails the start there. */
  testOnlyBeforeStep?: (step: ClusterStartStep) => void | Promise<void>;
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

/**
 * Opens the store, registers every kind, starts the cluster's state (index, controllers, garbage collector), then
 * serves. Each step's close goes onto one AsyncDisposableStack: a step that fails closes what the earlier ones opened,
 * and close() runs the same code.
 */
export async function startClusterApiServer(options: ClusterApiServerOptions): Promise<RunningClusterApiServer> {
  const dataDir = resolve(options.dataDir);
  const step = async (name: ClusterStartStep) => options.testOnlyBeforeStep?.(name);
  await ensureDataDirectory(dataDir);
  await using stack = new AsyncDisposableStack();
  const metrics = createApiMetrics(options.metricsRegistry);
  await step("store");
  const storage = await openClusterStore(stack, dataDir, metrics, options.logger);
  const addresses = new ServiceAddresses();
  const rbac = new RbacIndex();
  const registry = new Registry(storage);
  const tokens = await ServiceAccountTokens.open(dataDir, registry);
  const roleRules: RoleRules = (kind, name, namespace) => rbac.roleRules(kind, name, namespace);
  for (const definition of clusterResources(addresses, storage, roleRules, tokens.tokenRequest())) {
    registry.register(definition);
  }
  await step("state");
  const state = await startClusterState(stack, { registry, storage, addresses, rbac, logger: options.logger });
  await step("server");
  const served = await serveCluster(stack, options, { dataDir, registry, rbac, tokens, state, addresses, metrics });
  options.logger?.info({ url: served.url }, "cluster API server ready");
  const running = stack.move();
  let closed: Promise<void> | undefined;
  return {
    ...served,
    registry,
    close() {
      closed ??= running.disposeAsync();
      return closed;
    },
  };
}

/** The steps of startClusterApiServer(), in order (ClusterApiServerOptions.testOnlyBeforeStep). */
export type ClusterStartStep = "store" | "state" | "server";

type RoleRules = Parameters<typeof clusterResources>[2];

/**
 * The WAL's fsync runs on the thread pool: writes are still acknowledged only once durable, but a virtual cluster's
 * syncer, which shares this process, keeps working while the disk syncs. Checkpoints, which still block the loop for
 * their copy and two fsyncs, come at most once a second (or every 10,000 rows) instead of every 250 ms. Smaller
 * caches than the platform's: a virtual cluster's runtime is meant to fit in little memory, and the OS caches the
 * file anyway. As the platform does (without a leader: one process owns the file), every minute, history older than
 * five minutes is dropped; the SQLite store then returns the freed pages by itself.
 */
async function openClusterStore(
  stack: AsyncDisposableStack,
  dataDir: string,
  metrics: ApiMetrics,
  logger: Logger | undefined,
): Promise<KeyValueStore> {
  const store = await openSqliteStore({
    path: join(dataDir, CLUSTER_DATABASE),
    fsync: "thread-pool",
    checkpoint: { intervalMs: 1_000, maxRows: 10_000 },
    pageCacheBytes: 8 * 1024 * 1024,
    readCacheBytes: 4 * 1024 * 1024,
  });
  const storage = instrumentStore(store, (op, r, ok, s) => metrics.storageOperation(op, r, ok, s));
  stack.defer(() => storage.close());
  const compaction = new RetentionCompaction({ storage, retentionMs: 5 * 60_000 });
  const compactor = setInterval(() => {
    compaction.tick().catch((error) => logger?.warn({ err: String(error) }, "compaction failed"));
  }, 60_000);
  compactor.unref();
  stack.defer(() => clearInterval(compactor));
  return storage;
}

interface ClusterState {
  informer: StoreInformer;
  kubernetesService: KubernetesServiceReconciler;
}

/** The cluster state index and the controllers over it, the garbage collector, default namespaces and RBAC. */
async function startClusterState(
  stack: AsyncDisposableStack,
  parts: { registry: Registry; storage: KeyValueStore; addresses: ServiceAddresses; rbac: RbacIndex; logger?: Logger },
): Promise<ClusterState> {
  const { registry, addresses, logger } = parts;
  const namespaces = new NamespaceController(registry, logger);
  const kubernetesService = new KubernetesServiceReconciler({ registry, clusterIP: addresses.firstAddress, logger });
  const mirroring = new EndpointSliceMirroring({ registry, logger });
  const informer = new StoreInformer(
    parts.storage,
    combineHandlers([parts.rbac, serviceAddressHandler(addresses), namespaces, kubernetesService, mirroring]),
    (error) => logger?.error({ err: String(error) }, "cluster state index update failed"),
  );
  stack.defer(() => informer.stop());
  stack.defer(() => namespaces.stop());
  stack.defer(() => kubernetesService.stop());
  stack.defer(() => mirroring.stop());
  await informer.start();
  mirroring.start();
  const collector = new GarbageCollector({
    registry,
    onError: (error, key) => logger?.warn({ key, err: String(error) }, "garbage collection failed"),
  });
  stack.defer(() => collector.stop());
  await collector.start();
  await ensureNamespaces(registry);
  await bootstrapRbac(registry);
  return { informer, kubernetesService };
}

interface ServeParts {
  dataDir: string;
  registry: Registry;
  rbac: RbacIndex;
  tokens: ServiceAccountTokens;
  state: ClusterState;
  addresses: ServiceAddresses;
  metrics: ApiMetrics;
}

/** The HTTPS server, `default/kubernetes` pointing at it, and <data-dir>/admin.kubeconfig. */
async function serveCluster(
  stack: AsyncDisposableStack,
  options: ClusterApiServerOptions,
  parts: ServeParts,
): Promise<Omit<RunningClusterApiServer, "registry" | "close">> {
  const { dataDir, state } = parts;
  const host = options.host ?? "127.0.0.1";
  const address = await advertiseAddress(host);
  const tls = await ensureServingCertificates({
    dataDir,
    hosts: [host, address, parts.addresses.firstAddress, "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
  });
  const token = await ensureAdminToken(dataDir);
  const certificates = new ClientCertificateAuthenticator(options.clientCertificateAuthorities ?? [], {
    extraGroups: options.clientCertificateGroups,
  });
  const server = await startApiServer({
    resources: servedStores(parts.registry),
    // The admin token is checked first so it never reaches an authenticator that might send it elsewhere.
    authenticators: [
      new AdminTokenAuthenticator(token),
      certificates,
      parts.tokens.authenticator(),
      ...(options.authenticators ?? []),
    ],
    authorizer: new RbacAuthorizer(parts.rbac, () => state.informer.fresh()),
    tls: {
      certPem: tls.certPem,
      keyPem: tls.keyPem,
      clientCaPem: joinPems(options.clientCertificateAuthorities),
      requestClientCertificates: true,
    },
    host,
    port: options.port ?? DEFAULT_CLUSTER_PORT,
    version: platformVersion(),
    logger: options.logger,
    metrics: parts.metrics,
    limits: options.limits,
    hooks: options.hooks,
    // Failing while writes fail for lack of space (they answer 507 meanwhile).
    healthChecks: { "store-space": () => parts.registry.storage.checkSpace?.() },
  });
  stack.defer(() => server.close());
  const url = serverUrl(host, server.port);
  await state.kubernetesService.start(address, server.port);
  const kubeconfigPath = join(dataDir, CLUSTER_ADMIN_KUBECONFIG);
  const name = options.name ?? DEFAULT_NAME;
  const kubeconfig = buildKubeconfig({
    name,
    server: url,
    certificateAuthorityPem: tls.caPem,
    user: { token },
    userName: `${name}-admin`,
  });
  await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
  return {
    url,
    port: server.port,
    caPem: tls.caPem,
    kubeconfigPath,
    setClientCertificateAuthorities(pems) {
      certificates.setAuthorities(pems);
      server.setClientCaPem(joinPems(pems));
    },
  };
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
