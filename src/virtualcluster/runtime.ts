// Composition root of a virtual cluster (`virtualcluster run`): its own API server (core/v1 + rbac in its data
// directory), the syncer that copies Services, Endpoints and referenced Secrets into the host namespace, and the
// platform connection (when the settings ask for one), whose client CA and JWKS let platform users in.
//
// Start order: settings (fail fast on any problem) -> API server -> platform connection (its failure never stops the
// control plane) -> syncer. Close in reverse.

import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { platformVersion } from "../apimachinery/version.ts";
import { startClusterApiServer } from "../cluster-apiserver/cluster-api-server.ts";
import { Registry as PromRegistry } from "../http/prometheus.ts";
import type { TokenVerifier } from "../identity/token-verifier.ts";
import type { PlatformCredentials } from "./connect/api-key-lookup.ts";
import { hostApi } from "./connect/host-api.ts";
import type { OidcAuthenticator } from "./connect/oidc-authenticator.ts";
import { PlatformConnection } from "./connect/platform-connection.ts";
import { PlatformIssuers } from "./connect/platform-issuers.ts";
import { ADMIN_GROUP, PlatformUserAuthenticator } from "./connect/platform-user-authenticator.ts";
import { exposedGc, HeapCompactor } from "./heap-compactor.ts";
import { type KubeAccess, loadKubeAccess } from "./kube/kube-access.ts";
import { KubeHttp } from "./kube/kube-http.ts";
import { startRuntimeAudit } from "./runtime-audit.ts";
import { type RuntimeStatus, writeRuntimeStatus } from "./runtime-status.ts";
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
}

export interface RunningRuntime {
  url: string;
  kubeconfigPath: string;
  status(): RuntimeStatus;
  close(): Promise<void>;
}

export async function startRuntime(options: RuntimeOptions): Promise<RunningRuntime> {
  const { name, namespace, logger } = options;
  const loaded: LoadedSettings = loadSettings(options.settingsText, { namespace });
  const platformSettings = loaded.settings.external.platform;
  let connection: PlatformConnection | undefined;
  // The verifier (and jose with it) loads once the platform is known: a virtual cluster without one never needs it.
  let verifier: Promise<TokenVerifier> | undefined;
  let verifierFor: string | undefined;
  let credentialsNow: PlatformCredentials | undefined;
  // Tokens are the platform's by its key; their issuer may be any address the platform has had (platform-issuers.ts).
  const issuers = new PlatformIssuers(() => connection?.runCycle() ?? Promise.resolve());
  const audit =
    loaded.settings.audit &&
    startRuntimeAudit({
      settings: loaded.settings.audit,
      dataDir: options.dataDir,
      platform: platformSettings && {
        instance: () => connection?.state().instance,
        credentials: () => credentialsNow,
      },
      logger,
      forwardIntervalMs: options.heartbeatIntervalMs,
    });

  const platformUsers = new PlatformUserAuthenticator({
    target: () => {
      const state = connection?.state();
      return state?.connected && state.project && state.instance
        ? { project: state.project, name: state.instance.name }
        : undefined;
    },
    review: (credential) => {
      const api = connection?.api();
      if (!api) throw Object.assign(new Error("not connected to the platform"), { code: 503 });
      return api.review(credential);
    },
    verifyToken: async (token) => {
      if (!verifier) throw new Error("the platform's signing keys are not known yet");
      const ready = await verifier;
      const verified = await issuers.verify(() => ready.verify(token));
      return { name: verified.name, uid: verified.uid, kind: verified.kind, scope: verified.scope, exp: verified.exp };
    },
  });

  const metrics = new PromRegistry();
  let syncer: Syncer | undefined;
  registerSyncerMetrics(metrics, () => syncer?.stats());
  // ID tokens of the configured OIDC issuer (such as the platform's /oidc) before the platform's own credentials.
  const oidc = loaded.settings.controlPlane.apiServer.oidc;
  // Loaded only when configured: it brings jose, which a virtual cluster without OIDC never needs.
  let oidcUsers: OidcAuthenticator[] = [];
  try {
    if (oidc) {
      const { OidcAuthenticator } = await import("./connect/oidc-authenticator.ts");
      oidcUsers = [new OidcAuthenticator(oidc, { caPem: oidc.caFile ? readCaFile(oidc.caFile) : undefined })];
    }
  } catch (error) {
    loaded.dispose();
    throw error;
  }
  const server = await startClusterApiServer({
    metricsRegistry: metrics,
    dataDir: options.dataDir,
    host: options.listenHost,
    port: options.port ?? 0,
    name,
    authenticators: [...oidcUsers, ...(platformSettings ? [platformUsers] : [])],
    // Only the instance's client CA is trusted, and the platform signs only for users allowed to reach this cluster.
    clientCertificateGroups: [ADMIN_GROUP],
    hooks: audit ? audit.hooks : undefined,
    logger,
  });
  const endpoint = new URL(server.url).host;

  // The connection's few host calls get their own pool; the syncer's informers and writes keep theirs.
  const hostHttp = new KubeHttp(options.host, { userAgent: "virtualcluster-platform-connection" });
  if (platformSettings) {
    connection = new PlatformConnection({
      name,
      namespace,
      platform: platformSettings,
      host: hostApi(hostHttp),
      describe: () => ({
        kubernetesVersion: kubernetesVersion(),
        servingCaPem: server.caPem,
        endpoint,
      }),
      onClientCertificateAuthority: (pem) => server.setClientCertificateAuthorities([pem]),
      onConnected: (credentials: PlatformCredentials, self) => {
        credentialsNow = credentials;
        issuers.learn(credentials.host, self.platformHost);
        // One verifier per platform address; it refetches the JWKS itself when it meets an unknown key id.
        if (verifierFor === credentials.host) return;
        verifierFor = credentials.host;
        const jwks = {
          jwksUrl: `https://${credentials.host}/.well-known/jwks.json`,
          ca: credentials.certificateAuthorityPem,
          insecure: credentials.insecure,
          issuers: () => issuers.list(),
        };
        verifier = import("../identity/token-verifier.ts").then(({ createTokenVerifier }) => createTokenVerifier(jwks));
      },
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      env: options.env,
      logger,
    });
    await connection.start();
  }

  // The syncer writes to its own API server like any client, as the admin its kubeconfig names, and reads its store
  // directly (the same process: no HTTPS round of every watch event).
  const virtual = await loadKubeAccess({ file: server.kubeconfigPath });
  try {
    syncer = await startSyncer({
      virtual,
      virtualRegistry: server.registry,
      host: options.host,
      name,
      hostNamespace: namespace,
      settings: loaded,
      logger,
    });
  } catch (error) {
    await connection?.close();
    hostHttp.close();
    await server.close();
    await audit?.close();
    loaded.dispose();
    throw error;
  }

  // Start-up garbage, and later each burst's, goes back to the system once the runtime is quiet.
  const gc = exposedGc();
  const compactor = gc && new HeapCompactor({ gc, work: () => syncer?.stats().syncs ?? 0 });
  let closed = false;
  void syncer.synced().then(() => {
    if (!closed) compactor?.start();
  });

  const status = (): RuntimeStatus => ({
    name,
    namespace,
    url: server.url,
    platform: connection?.state(),
    syncer: syncer!.stats(),
    audit: audit ? audit.forwarding() : undefined,
  });
  // The status file is how `virtualcluster list` and people read the connection state without credentials.
  const writeStatus = () => writeRuntimeStatus(options.dataDir, status()).catch(() => {});
  await writeStatus();
  const statusTimer = setInterval(writeStatus, Math.min(5_000, options.heartbeatIntervalMs ?? 5_000));
  statusTimer.unref();

  return {
    url: server.url,
    kubeconfigPath: server.kubeconfigPath,
    status,
    async close() {
      closed = true;
      compactor?.stop();
      clearInterval(statusTimer);
      await syncer?.close();
      await server.close();
      await audit?.close(); // sends what is left while the connection still holds
      await connection?.close();
      hostHttp.close();
      loaded.dispose();
    },
  };
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
