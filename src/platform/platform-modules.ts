// The management platform's modules, in start order (docs/architecture.md, "Modules and their lifecycle"). Made at
// once, after the store opened and before anything starts: each declares its kinds to the one registry, and the
// modules that build on another are given it here.

import type { LiveSettings } from "../config/settings.ts";
import type { ApiMetrics } from "../http/metrics.ts";
import type { Registry } from "../registry/registry.ts";
import { ApiServerModule } from "./api-server-module.ts";
import { AuditModule } from "./audit-module.ts";
import { DEFAULT_CLUSTER_HEARTBEAT_MS } from "./clusters/cluster-heartbeats.ts";
import { ClustersModule } from "./clusters-module.ts";
import { ConfigModule } from "./config-module.ts";
import { ConfigSystemsModule } from "./config-systems-module.ts";
import { ConsoleModule } from "./console-module.ts";
import { ControlSocketModule } from "./control-socket-module.ts";
import { GarbageCollectorModule } from "./garbage-collector-module.ts";
import { IdentityModule } from "./identity-module.ts";
import { OidcModule } from "./oidc-module.ts";
import type { PlatformModule } from "./platform-module.ts";
import type { PlatformOptions } from "./platform-options.ts";
import { heartbeatBounds } from "./projects/heartbeat-bounds.ts";
import { ProjectsModule } from "./projects-module.ts";
import { ReplicasModule } from "./replicas-module.ts";
import { SsoModule } from "./sso-module.ts";
import type { StoreModule } from "./store-module.ts";

export interface PlatformModulesOptions {
  options: PlatformOptions;
  dataDir: string;
  auditDirs: string[];
  userTls?: { certPem: string; keyPem: string };
  store: StoreModule;
  registry: Registry;
  settings: LiveSettings;
  metrics: ApiMetrics;
}

export interface PlatformModules {
  list: PlatformModule[];
  identity: IdentityModule;
  console: ConsoleModule;
  server: ApiServerModule;
  configSystems: ConfigSystemsModule;
}

export function platformModules(parts: PlatformModulesOptions): PlatformModules {
  const { options, dataDir, store, registry, settings, metrics } = parts;
  const { logger } = options;
  const { storage, etcd } = store;
  const sharedStore = Boolean(etcd);
  const liveness = instanceLiveness(options);
  const { stateSweepIntervalMs, clientThrottle, ...identityTuning } = options.auth ?? {};
  const identity = new IdentityModule({
    ...{ storage, settings, registry, dataDir, logger, sharedStore, stateSweepIntervalMs },
    ...identityTuning,
    instanceHeartbeatSeconds: liveness.heartbeatSeconds,
  });
  const config = new ConfigModule({
    settings,
    configFile: options.configFile,
    auditDirs: () => parts.auditDirs,
    logger,
  });
  const audit = new AuditModule({
    ...{ settings, dataDir, auditDirs: parts.auditDirs, metrics: metrics.registry, logger },
    datastoreTuning: options.auditDatastoreTuning,
    testOnlyRequestObjectFault: options.testOnlyAuditFault,
  });
  const server: ApiServerModule = new ApiServerModule({
    ...{ host: options.host, port: options.port, dataDir, userTls: parts.userTls, advertiseUrl: options.advertiseUrl },
    ...{ limits: options.limits, settings, metrics, identity, config, audit, logger },
    modules: () => [store, ...list],
  });
  const clusters = new ClustersModule({
    ...{ storage, settings, registry, logger },
    issuer: () => identity.issuer(),
    keyProblem: (name, uid) => identity.keyProblem(name, uid),
    self: () => server.self(),
    heartbeatMs: options.clusterHeartbeatMs ?? DEFAULT_CLUSTER_HEARTBEAT_MS,
  });
  const projects = new ProjectsModule({
    ...{ storage, settings, registry, clusters: clusters.clusterLookup, authorizer: identity.authorizer, logger },
    offlineAfterMs: liveness.offlineAfterSeconds * 1000,
  });
  const consoleModule = new ConsoleModule(settings);
  const configSystems = new ConfigSystemsModule({
    ...{ settings, dataDir, storage, registry, metrics: metrics.registry, logger },
    rotateSigningKey: () => identity.keys().signingKeys.rotate(),
    rotateEncryptionKey: () => store.rotateEncryptionKey(),
    server: () => server.self(),
    options: options.configSystems,
  });
  const list: PlatformModule[] = [
    identity,
    // The stored (or file) Config is in force before anything reads the settings it drives.
    config,
    new SsoModule({ identity, stateSweepIntervalMs, logger }),
    new OidcModule({ identity, clientThrottle, sharedStore, stateSweepIntervalMs, logger }),
    audit,
    projects,
    clusters,
    new GarbageCollectorModule(logger),
    // Runs every module's tasks: started after, closed before, the modules they use.
    new ReplicasModule({ storage, etcd, logger, tasks: () => [store, ...list].flatMap((m) => m.tasks?.() ?? []) }),
    consoleModule,
    server,
    // After the server: Prometheus scrapes the platform where it listens.
    configSystems,
    new ControlSocketModule({ dataDir, store, logger }),
  ];
  return { list, identity, console: consoleModule, server, configSystems };
}

/** How often virtual clusters report, and when a silent one is offline (default 30 s, 3 heartbeats). */
function instanceLiveness(options: PlatformOptions) {
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
  return heartbeatBounds({
    heartbeatSeconds: seconds(options.instanceHeartbeatMs),
    offlineAfterSeconds: seconds(options.instanceOfflineAfterMs),
  });
}
