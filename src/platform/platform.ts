// Composition root of the management platform: data directory, storage, registry, garbage collector,
// bootstrap admin, TLS and the HTTPS API server.

import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import { platformVersion } from "../apimachinery/version.ts";
import { auditEventDefinition } from "../apis/management/v1/auditevent.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import { withConfigUpsert } from "../apis/management/v1/config-store.ts";
import { createEncryptionKeyRotationDefinition } from "../apis/management/v1/encryptionkeyrotation.ts";
import { AuditLogger, type AuditLoggerOptions } from "../audit/audit-logger.ts";
import { defaultSettings, LiveSettings } from "../config/settings.ts";
import type { AuditConfig } from "../config/types.ts";
import { startApiServer } from "../http/api-server.ts";
import { createApiMetrics } from "../http/metrics.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import { keyCaller } from "../identity/key-caller.ts";
import { qualifySsoSubjects } from "../identity/sso/qualify-sso-subjects.ts";
import { buildKubeconfig, serverUrl } from "../pki/kubeconfig.ts";
import { ensureServingCertificates, loadUserCertificates } from "../pki/tls.ts";
import { GarbageCollector } from "../registry/garbage-collector.ts";
import { Registry } from "../registry/registry.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { checkDataDirectory, ensureDataDirectory } from "../storage/data-directory.ts";
import { instrumentStore } from "../storage/instrumented-store.ts";
import type { ConversionEvent } from "../storage/sqlite/auto-vacuum.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { StorageError } from "../storage/types.ts";
import { formatBytes } from "../utils/byte-size.ts";
import { auditDirectories, auditFileOf } from "./audit-directories.ts";
import { auditEventIntake } from "./audit-event-intake.ts";
import { AuditEventStore } from "./audit-event-store.ts";
import { createPlatformAuth, type PlatformAuthOptions } from "./auth.ts";
import { ADMIN_KEY_FILE, ADMIN_USER, bootstrapAdmin } from "./bootstrap.ts";
import { DEFAULT_CLUSTER_HEARTBEAT_MS } from "./clusters/cluster-heartbeats.ts";
import { createClusterResources } from "./clusters/cluster-resources.ts";
import { startConnectedClusters } from "./clusters/connected-clusters.ts";
import { startPlatformConfig } from "./config/platform-config.ts";
import { defaultConsoleDir, loadConsoleFiles } from "./console/console-files.ts";
import { CONSOLE_PUBLIC_PATHS, consoleRoutes, isConsolePageRequest } from "./console/console-routes.ts";
import { startControlSocket } from "./control-socket.ts";
import { checkDataDirPermissions, restrictUmask } from "./data-dir-permissions.ts";
import { EncryptionKeyFileError, readEncryptionKeys } from "./encryption-key-file.ts";
import { type EtcdBackendOptions, openEtcdBackend, readEtcdTls } from "./etcd-backend.ts";
import { findUndecodableValue } from "./find-undecodable-value.ts";
import { restampKeyGenerations } from "./key-generation-stamps.ts";
import { etcdLeadership, soleLeadership } from "./leader.ts";
import { managementResources } from "./management-resources.ts";
import { checkPortFree } from "./port-check.ts";
import { heartbeatBounds } from "./projects/heartbeat-bounds.ts";
import { InstanceLiveness } from "./projects/instance-liveness.ts";
import { createProjectResources } from "./projects/project-resources.ts";
import { ReplicaPresence } from "./replica-presence.ts";
import { replicaRoutes } from "./replica-routes.ts";
import { startStoreEncryption } from "./store-encryption.ts";
import { ENCRYPTION_KEY_FILE, restoreAdvice, STORE_FILE } from "./store-files.ts";
import { StoreHousekeeping, type StoreHousekeepingOptions } from "./store-housekeeping.ts";
import { registrySubjects } from "./subject-directory.ts";

export const API_PREFIX = "/kubernetes/management";
export const ADMIN_KUBECONFIG_FILE = "admin.kubeconfig";

export interface PlatformOptions {
  dataDir: string;
  /** How often virtual clusters report (selves tells them; default 30 s). */
  instanceHeartbeatMs?: number;
  /** An instance without a heartbeat for this long is marked offline (default 3 heartbeats; at least 2). */
  instanceOfflineAfterMs?: number;
  /** How often connected clusters' agents are asked for their info (default 30 s); offline after 3 missed. */
  clusterHeartbeatMs?: number;
  /**
   * This replica's address as the other replicas reach it (they relay connected clusters' requests to the replica
   * holding the agent's tunnel); default: the address it listens on.
   */
  advertiseUrl?: string;
  host: string;
  port: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  logger?: Logger;
  /** Live settings (access key limits, login); default: defaultSettings(). */
  settings?: LiveSettings;
  /** Auth tuning for tests (cheaper scrypt, throttle limits, sweep interval). */
  auth?: Pick<
    PlatformAuthOptions,
    "scrypt" | "throttle" | "clientThrottle" | "sweepIntervalMs" | "stateSweepIntervalMs"
  >;
  /** `platform start --config FILE`: the platform config file, loaded at start and watched. */
  configFile?: string;
  /** --audit-dir: where the Config may put the audit log, instead of <data-dir>/audit. */
  auditDirs?: string[];
  /** --encryption-key-file: the keys that encrypt secret values in the store (default <data-dir>/pki/encryption.key). */
  encryptionKeyFile?: string;
  /** Start even when group or others may read or write the data directory or a key file (not recommended). */
  allowInsecurePermissions?: boolean;
  /** Connection timeouts and in-flight limits of the API server (unset ones: DEFAULT_SERVER_LIMITS). */
  limits?: Partial<ServerLimits>;
  /** For tests of a full disk: SqliteStoreOptions.pageLimit of the store. */
  storePageLimit?: () => number;
  /** --store etcd: the store is on etcd, shared by every replica on the same prefix (default: SQLite in dataDir). */
  etcd?: EtcdBackendOptions;
  /** Compaction, quota, free-disk warning and etcd defragmentation (store-housekeeping.ts; defaults for each). */
  store?: StoreHousekeepingOptions;
  /** TEST-ONLY FAULT SEAM of the audit log (AuditLoggerOptions.testOnlyRequestObjectFault); never set outside tests. */
  testOnlyAuditFault?: AuditLoggerOptions["testOnlyRequestObjectFault"];
  /** Tuning of the audit datastore for tests (sweep interval, spool bound, retry delay). */
  auditDatastoreTuning?: AuditLoggerOptions["datastoreTuning"];
}

export interface RunningPlatform {
  url: string;
  /** Where the web console is, when it is built (dist/console). */
  consoleUrl?: string;
  port: number;
  dataDir: string;
  /** The admin key and password, only on the first start of a data directory (they are shown once). */
  createdAdminKey?: string;
  createdAdminPassword?: string;
  registry: Registry;
  /** The settings in force (the platform config drives them). */
  settings: LiveSettings;
  close(): Promise<void>;
}

export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  const dataDir = resolve(options.dataDir);
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
  const liveness = heartbeatBounds({
    heartbeatSeconds: seconds(options.instanceHeartbeatMs),
    offlineAfterSeconds: seconds(options.instanceOfflineAfterMs),
  });
  restrictUmask();
  // Preconditions first: nothing (admin credentials, store, certificates) is written when the start cannot succeed.
  await checkPortFree(options.host, options.port);
  await checkDataDirectory(dataDir);
  if (!options.allowInsecurePermissions) {
    const keyFiles = [options.tlsKeyFile, options.encryptionKeyFile].filter((file) => file !== undefined);
    await checkDataDirPermissions(
      dataDir,
      keyFiles.map((file) => resolve(file)),
    );
  }
  // Served certificates too: a start that fails on them after bootstrapping would show the admin key to nobody.
  const userTls =
    options.tlsCertFile && options.tlsKeyFile
      ? await loadUserCertificates(options.tlsCertFile, options.tlsKeyFile)
      : undefined;
  await ensureDataDirectory(dataDir);
  // The audit log stays in a directory of its own, which overlaps none of the platform's files (checked at start).
  const auditDirs = auditDirectories({
    dataDir,
    given: options.auditDirs,
    keyFiles: [options.encryptionKeyFile, options.tlsKeyFile, options.tlsCertFile].filter((f) => f !== undefined),
  });
  const logger = options.logger;
  const metrics = createApiMetrics();
  const encryption = await openPlatformStore(dataDir, options);
  const storage = instrumentStore(encryption.store, (op, resource, ok, s) =>
    metrics.storageOperation(op, resource, ok, s),
  );
  const housekeeping = await StoreHousekeeping.start({
    storage,
    etcd: encryption.etcd &&
      options.etcd && {
        store: encryption.etcd,
        endpoints: options.etcd.endpoints,
        tls: await readEtcdTls(options.etcd),
      },
    dataDir,
    metrics: metrics.registry,
    options: options.store,
    logger,
  });
  const settings = options.settings ?? new LiveSettings(defaultSettings());
  const auth = await createPlatformAuth({
    storage,
    settings,
    logger,
    sharedStore: Boolean(encryption.etcd),
    instanceHeartbeatSeconds: liveness.heartbeatSeconds,
    ...options.auth,
  });
  // Past the store quota, creates and updates are refused; deletes go through (store-monitor.ts).
  const registry = new Registry(storage, { writeGate: housekeeping.monitor.gate });
  const clusters = createClusterResources(settings);
  const projects = createProjectResources({
    storage,
    settings,
    clusters: clusters.clusterLookup,
    logger: options.logger,
  });
  const configOptions = { auditDirs: () => auditDirs };
  // Made before the config is read: it follows the settings, and the audit events resource reads through it.
  const audit = new AuditLogger({
    settings,
    logger: options.logger,
    metrics: metrics.registry,
    dataDir,
    datastoreTuning: options.auditDatastoreTuning,
    filePath: (path) => auditFileOf(path, auditDirs, (message) => logger?.warn(message)),
    testOnlyRequestObjectFault: options.testOnlyAuditFault,
  });
  const auditParts = {
    events: {
      ...auditEventDefinition,
      serve: (definition: ResourceDefinition) =>
        new AuditEventStore(definition, { audit, isAdmin: (context) => keyCaller.managesAll(context) }),
    },
    instanceEvents: auditEventIntake({ audit, auditConfig: () => settings.current().audit as AuditConfig }),
  };
  const encryptionKeyRotations = createEncryptionKeyRotationDefinition({
    rotate: () => encryption.rotate(),
    isAdmin: (context) => keyCaller.managesAll(context),
  });
  const parts = {
    auth: auth.definitions,
    projects: projects.definitions,
    clusters: clusters.definitions,
    config: configOptions,
    encryptionKeyRotations,
    subjects: registrySubjects(() => registry),
    audit: auditParts,
  };
  for (const definition of managementResources(parts)) {
    registry.register(definition);
  }
  auth.attach(registry);
  // Stores of earlier versions: their keys' stamps as session generations would have made them (once).
  await restampKeyGenerations(storage, logger);
  clusters.attach(registry);

  // Background controllers run on one replica: the elected leader on etcd, this process on SQLite.
  const leadership = encryption.etcd
    ? etcdLeadership({ store: encryption.etcd, identity: `${hostname()}/${process.pid}`, logger })
    : soleLeadership(logger);
  leadership.run(() => {
    const collector = new GarbageCollector({
      registry,
      onError: (error, key) => logger?.warn({ key, err: String(error) }, "garbage collection failed"),
    });
    return { name: "garbage collector", start: () => collector.start(), stop: () => collector.stop() };
  });
  leadership.run(() => ({
    name: "login key sweeper",
    start: () => auth.sweeper.start(),
    stop: () => auth.sweeper.stop(),
  }));
  leadership.run(() => auth.stateSweeper());
  housekeeping.runOn(leadership);
  const bootstrap = await bootstrapAdmin(registry, dataDir, auth.passwords, { shared: Boolean(encryption.etcd) });
  // The stored (or file) config is in force before the first request; the audit log follows it.
  const config = await startPlatformConfig({
    registry,
    settings,
    configFile: options.configFile,
    logger: options.logger,
  });
  await qualifySsoSubjects({
    storage,
    store: (plural) => registry.genericStore(GROUP, plural)!,
    settings: () => settings.current().auth.sso,
    logger,
  });
  await projects.start(registry, auth.serverOptions.authorizer);
  leadership.run(() => projects.controller());
  leadership.run(() => {
    const monitor = new InstanceLiveness({ registry, offlineAfterMs: liveness.offlineAfterSeconds * 1000, logger });
    return { name: "instance liveness", start: () => monitor.start(), stop: () => void monitor.stop() };
  });

  const tls = userTls
    ? { ...userTls, caPem: undefined }
    : await ensureServingCertificates({ dataDir, hosts: [options.host] });

  const replicas = new ReplicaPresence({
    storage,
    identity: leadership.identity,
    version: platformVersion().gitVersion,
    store: encryption.etcd ? "etcd" : "sqlite",
    leading: () => leadership.leading,
    onError: (error) => logger?.warn({ err: String(error) }, "renewing this replica's record failed"),
  });
  await replicas.start();
  // The record says at once when this replica starts or stops leading.
  leadership.run(() => ({
    name: "replica record",
    start: () => replicas.renew(),
    stop: () => void replicas.renew().catch(() => undefined),
  }));
  // Connected clusters: agents' tunnels to this replica, kubectl through the platform, spaces and placed clusters.
  let selfUrl = "";
  const clusterHeartbeatMs = options.clusterHeartbeatMs ?? DEFAULT_CLUSTER_HEARTBEAT_MS;
  const connected = await startConnectedClusters({
    storage,
    registry,
    settings,
    issuer: () => auth.issuer(),
    keyProblem: (name, uid) => auth.keyProblem(name, uid),
    self: () => ({ url: selfUrl, caPem: tls.caPem }),
    heartbeatMs: clusterHeartbeatMs,
    logger,
  });
  leadership.run(() => {
    const liveness = new InstanceLiveness({
      registry,
      resource: { plural: "clusters", offlinePhase: "Offline" },
      offlineAfterMs: 3 * clusterHeartbeatMs,
      logger,
    });
    return { name: "cluster liveness", start: () => liveness.start(), stop: () => void liveness.stop() };
  });

  const consoleFiles = await loadConsoleFiles(defaultConsoleDir());
  const server = await startApiServer({
    resources: withConfigUpsert(auth.stores(registry), config.controller),
    ...auth.serverOptions,
    // The web console (src/platform/console/): its pages for browser navigations, its bundle and branding.
    publicPaths: [...(auth.serverOptions.publicPaths ?? []), ...CONSOLE_PUBLIC_PATHS],
    isPublicRequest: isConsolePageRequest,
    plugins: [
      ...(auth.serverOptions.plugins ?? []),
      consoleRoutes({ settings, files: consoleFiles, version: platformVersion().gitVersion }),
      replicaRoutes({ replicas: () => replicas.list(), identity: leadership.identity }),
    ],
    passthrough: connected.routes,
    hooks: audit.hooks,
    authenticatePublicPath: (path) => path === "/version" && settings.current().authenticateVersionEndpoint,
    tls: { certPem: tls.certPem, keyPem: tls.keyPem },
    host: options.host,
    port: options.port,
    pathPrefixes: [API_PREFIX],
    version: platformVersion(),
    logger: options.logger,
    metrics,
    limits: options.limits,
    // Failing while writes fail for lack of space, so a load balancer sends clients to a replica that can write.
    healthChecks: {
      "store-space": () => storage.checkSpace?.(),
      // Passes; warns (verbose line, Warning header) while free disk is low or the store is near or at its quota.
      "store-housekeeping": housekeeping.healthCheck,
      ...(encryption.etcd ? { etcd: () => encryption.etcd?.checkHealth() } : {}),
    },
  });
  // Backups of an etcd store are etcd's own (etcdctl snapshot save).
  const control = encryption.etcd
    ? undefined
    : await startControlSocket({ dataDir, storage, storeInfo: () => housekeeping.monitor.info(), logger });

  const url = serverUrl(options.host, server.port);
  selfUrl = options.advertiseUrl ?? url;
  auth.setServerHost(new URL(url).host);
  await writeAdminKubeconfig(dataDir, `${url}${API_PREFIX}`, tls.caPem);

  return {
    url,
    consoleUrl: consoleFiles.index === undefined ? undefined : `${url}/`,
    port: server.port,
    dataDir,
    createdAdminKey: bootstrap.createdKey,
    createdAdminPassword: bootstrap.createdPassword,
    registry,
    settings,
    async close() {
      await control?.close();
      // The server waits for every connection; agents' tunnels (and what is proxied over them) end first.
      const serverClosed = server.close();
      await connected.close();
      await serverClosed;
      await audit.close();
      config.close();
      await replicas.stop().catch(() => undefined);
      await leadership.stop();
      projects.close();
      auth.close();
      await housekeeping.close();
      await storage.close();
    },
  };
}

/**
 * Opens the store, its encryption (which seals plain secret values and opens every sealed one), and reads every
 * value once: a damaged database file, a secret value that does not open or a value that does not decode stops the
 * start with one line naming the file or key, before anything else reads (or writes) the store.
 */
async function openPlatformStore(dataDir: string, options: PlatformOptions) {
  const path = join(dataDir, STORE_FILE);
  const logger = options.logger;
  const corrupt = (error: unknown) =>
    error instanceof StorageError && error.storageCode === "Corrupt"
      ? new Error(`the platform's ${error.message}; ${restoreAdvice(dataDir)}`, { cause: error })
      : error;
  const etcd = options.etcd && (await openEtcdBackend(options.etcd));
  const store =
    etcd ??
    (await openSqliteStore({
      path,
      pageLimit: options.storePageLimit,
      onConversion: (event) => logConversion(logger, event),
      onSpaceChange: (outOfSpace, message) => {
        if (outOfSpace) logger?.error({ path }, `${message}: writes fail until space is freed`);
        else logger?.info({ path }, "the store can be written again");
      },
    }).catch((error: unknown) => {
      throw corrupt(error);
    }));
  try {
    // Replicas must seal with one key: on etcd the key file is never made here (two first starts would make two).
    if (etcd) await requireSharedKeyFile(options.encryptionKeyFile ?? join(dataDir, ENCRYPTION_KEY_FILE));
    const encryption = await startStoreEncryption({
      storage: store,
      dataDir,
      keyFile: options.encryptionKeyFile && resolve(options.encryptionKeyFile),
      logger,
    });
    const bad = await findUndecodableValue(encryption.store);
    if (bad) {
      const reason = `key ${bad.key} (revision ${bad.revision}) does not hold a JSON object`;
      throw new StorageError("Corrupt", `storage ${path} is corrupt: ${reason}`);
    }
    return { ...encryption, etcd };
  } catch (error) {
    await store.close();
    throw corrupt(error);
  }
}

/** The one-time conversion of a store file made before incremental vacuum (src/storage/sqlite/auto-vacuum.ts). */
function logConversion(logger: Logger | undefined, event: ConversionEvent): void {
  const fields = { path: event.path, bytes: event.bytesBefore };
  if (event.phase === "started") {
    logger?.info(fields, `converting the store to incremental vacuum: one VACUUM of ${formatBytes(event.bytesBefore)}`);
  } else if (event.phase === "converted") {
    logger?.info(
      { ...fields, bytesAfter: event.bytesAfter, durationMs: Math.round(event.durationMs ?? 0) },
      `converted the store to incremental vacuum in ${((event.durationMs ?? 0) / 1000).toFixed(1)} s: ${formatBytes(event.bytesBefore)} -> ${formatBytes(event.bytesAfter ?? 0)}`,
    );
  } else {
    logger?.warn(
      fields,
      `the store was not converted to incremental vacuum (${event.reason}): space compaction frees is reused but not returned; convert it with the platform stopped: virtualcluster platform store-info --data-dir DIR --vacuum`,
    );
  }
}

async function requireSharedKeyFile(file: string): Promise<void> {
  if (await readEncryptionKeys(file)) return;
  throw new EncryptionKeyFileError(
    `with --store etcd every replica needs the same encryption key file, and ${file} does not exist: make one ` +
      `(openssl rand -base64 32 > FILE; chmod 600 FILE) and give it to every replica with --encryption-key-file`,
  );
}

/** Rewritten on every start so the kubeconfig follows the current address and certificate. */
async function writeAdminKubeconfig(dataDir: string, server: string, caPem: string | undefined): Promise<void> {
  let key: string;
  try {
    key = (await readFile(join(dataDir, ADMIN_KEY_FILE), "utf8")).trim();
  } catch {
    return; // the key file was removed on purpose: nothing to write
  }
  const document = buildKubeconfig({
    name: "virtualcluster-platform",
    server,
    certificateAuthorityPem: caPem,
    user: { token: key },
    userName: ADMIN_USER,
  });
  await writeFile(join(dataDir, ADMIN_KUBECONFIG_FILE), document, { mode: 0o600 });
}
