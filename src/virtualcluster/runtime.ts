// Composition root of a virtual cluster (`virtualcluster run`): its own API server (core/v1 + rbac in its data
// directory), the syncer that copies Services, Endpoints and referenced Secrets into the host namespace, and the
// platform connection (when the settings ask for one), whose client CA and JWKS let platform users in.
//
// Start order: settings (fail fast on any problem) -> audit log -> API server -> platform connection (its failure
// never stops the control plane) -> syncer -> heap compactor and status file. Each close goes onto one
// AsyncDisposableStack as its part starts: closed in reverse, also when the start fails half way.

import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { platformVersion } from "../apimachinery/version.ts";
import { type RunningClusterApiServer, startClusterApiServer } from "../cluster-apiserver/cluster-api-server.ts";
import { Registry as PromRegistry } from "../http/prometheus.ts";
import { registerUsageMetrics } from "../metrics/usage.ts";
import type { OidcAuthenticator } from "./connect/oidc-authenticator.ts";
import { ADMIN_GROUP } from "./connect/platform-user-authenticator.ts";
import { exposedGc, HeapCompactor } from "./heap-compactor.ts";
import { type KubeAccess, loadKubeAccess } from "./kube/kube-access.ts";
import { PlatformLink } from "./platform-link.ts";
import { startRuntimeAudit } from "./runtime-audit.ts";
import { type RuntimeStatus, writeRuntimeStatus } from "./runtime-status.ts";
import { runtimeUsage } from "./runtime-usage.ts";
import { type LoadedSettings, loadSettings } from "./settings/load.ts";
import { type Syncer, startSyncer } from "./syncer/syncer.ts";
import { registerSyncerMetrics } from "./syncer/syncer-metrics.ts";

export interface RuntimeOptions {
  /** Virtual cluster name and the host namespace it lives in. */
  name: string;
  namespace: string;
  /** Text of virtualcluster.yaml. */
  settingsText: string;
  /** The host cluster to sync into. */
  host: KubeAccess;
  dataDir: string;
  /** Address the virtual cluster's API listens on (default 127.0.0.1) and its port (0: ephemeral). */
  listenHost?: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
  heartbeatIntervalMs?: number;
  logger?: Logger;
  /** TEST-ONLY FAULT SEAM: called before each step of the start; a throw fails the start there. */
  testOnlyBeforeStep?: (step: RuntimeStartStep) => void | Promise<void>;
}

/** The steps of startRuntime() after the settings, in order (RuntimeOptions.testOnlyBeforeStep). */
export type RuntimeStartStep = "api-server" | "platform" | "syncer" | "status";

export interface RunningRuntime {
  url: string;
  kubeconfigPath: string;
  status(): RuntimeStatus;
  close(): Promise<void>;
}

export async function startRuntime(options: RuntimeOptions): Promise<RunningRuntime> {
  const { name, namespace, logger } = options;
  const step = async (name: RuntimeStartStep) => options.testOnlyBeforeStep?.(name);
  // Each part's close goes onto the stack as it starts: a failed start closes what started, close() the same.
  await using stack = new AsyncDisposableStack();
  const loaded: LoadedSettings = await loadSettings(options.settingsText, { namespace });
  stack.defer(() => loaded.dispose());
  const platformSettings = loaded.settings.external.platform;
  const metrics = new PromRegistry();
  let syncer: Syncer | undefined;
  registerSyncerMetrics(metrics, () => syncer?.stats());
  // Cost control: this runtime's usage on its own /metrics and in every heartbeat to the platform.
  const usage = runtimeUsage({ registry: metrics, dataDir: options.dataDir, syncer: () => syncer?.stats() });
  const link = new PlatformLink({
    ...{ name, namespace, platform: platformSettings, host: options.host, kubernetesVersion: kubernetesVersion() },
    ...{ heartbeatIntervalMs: options.heartbeatIntervalMs, env: options.env, usage, logger },
  });
  registerUsageMetrics(metrics, async () => {
    const state = link.state();
    const labels = {
      project: state?.project ?? "",
      cluster: "",
      virtualcluster: state?.instance?.name ?? name,
      component: "virtualcluster",
    };
    return [{ labels, usage: await usage() }];
  });
  stack.defer(() => link.close());
  const audit =
    loaded.settings.audit &&
    startRuntimeAudit({
      settings: loaded.settings.audit,
      dataDir: options.dataDir,
      platform: platformSettings && { instance: () => link.state()?.instance, credentials: () => link.credentials() },
      logger,
      forwardIntervalMs: options.heartbeatIntervalMs,
    });
  // Closed before the link: it sends what is left while the connection still holds.
  if (audit) stack.defer(() => audit.close());
  await step("api-server");
  const server = await startClusterApiServer({
    metricsRegistry: metrics,
    dataDir: options.dataDir,
    host: options.listenHost,
    port: options.port ?? 0,
    name,
    authenticators: [...(await oidcAuthenticators(loaded)), ...(platformSettings ? [link.authenticator()] : [])],
    // Only the instance's client CA is trusted, and the platform signs only for users allowed to reach this cluster.
    clientCertificateGroups: [ADMIN_GROUP],
    hooks: audit ? audit.hooks : undefined,
    logger,
  });
  stack.defer(() => server.close());
  await step("platform");
  await link.connect(server);
  await step("syncer");
  syncer = await startRuntimeSyncer(options, loaded, server);
  stack.defer(() => syncer?.close());
  const running = syncer;
  const status = (): RuntimeStatus => ({
    name,
    namespace,
    url: server.url,
    platform: link.state(),
    syncer: running.stats(),
    audit: audit ? audit.forwarding() : undefined,
  });
  await step("status");
  await startHousekeeping(stack, options, running, status);
  const started = stack.move();
  return {
    url: server.url,
    kubeconfigPath: server.kubeconfigPath,
    status,
    close: () => started.disposeAsync(),
  };
}

/** ID tokens of the configured OIDC issuer (such as the platform's /oidc), tried before the platform's credentials. */
async function oidcAuthenticators(loaded: LoadedSettings): Promise<OidcAuthenticator[]> {
  const oidc = loaded.settings.controlPlane.apiServer.oidc;
  if (!oidc) return [];
  // Loaded only when configured: it brings jose, which a virtual cluster without OIDC never needs.
  const { OidcAuthenticator } = await import("./connect/oidc-authenticator.ts");
  return [new OidcAuthenticator(oidc, { caPem: oidc.caFile ? readCaFile(oidc.caFile) : undefined })];
}

/**
 * The syncer writes to its own API server like any client, as the admin its kubeconfig names, and reads its store
 * directly (the same process: no HTTPS round of every watch event).
 */
async function startRuntimeSyncer(
  options: RuntimeOptions,
  loaded: LoadedSettings,
  server: RunningClusterApiServer,
): Promise<Syncer> {
  const virtual = await loadKubeAccess({ file: server.kubeconfigPath });
  return startSyncer({
    virtual,
    virtualRegistry: server.registry,
    host: options.host,
    name: options.name,
    hostNamespace: options.namespace,
    settings: loaded,
    logger: options.logger,
  });
}

/** The heap compactor once the syncer is quiet, and the status file every few seconds; their stops go on `stack`. */
async function startHousekeeping(
  stack: AsyncDisposableStack,
  options: RuntimeOptions,
  syncer: Syncer,
  status: () => RuntimeStatus,
): Promise<void> {
  // Start-up garbage, and later each burst's, goes back to the system once the runtime is quiet.
  const gc = exposedGc();
  // The first compaction waits for the first syncs' trailing work (host answers, status): made at once, it left about
  // 4 MiB that only the next quiet look gave back.
  const compactor = gc && new HeapCompactor({ gc, work: () => syncer.stats().syncs ?? 0, settleMs: 1_000 });
  let closed = false;
  void syncer.synced().then(() => {
    if (!closed) compactor?.start();
  });
  stack.defer(() => {
    closed = true;
    compactor?.stop();
  });
  // The status file is how `virtualcluster list` and people read the connection state without credentials.
  const writeStatus = () => writeRuntimeStatus(options.dataDir, status()).catch(() => {});
  await writeStatus();
  const statusTimer = setInterval(writeStatus, Math.min(5_000, options.heartbeatIntervalMs ?? 5_000));
  statusTimer.unref();
  stack.defer(() => clearInterval(statusTimer));
}

function kubernetesVersion(): string {
  const version = platformVersion();
  return `v${version.major}.${version.minor}.0`;
}

function readCaFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`controlPlane.apiServer.oidc.caFile: cannot read ${file}: ${(error as Error).message}`);
  }
}
