// The options of startPlatform() (platform.ts) and what a running platform gives its caller.

import type { Logger } from "pino";
import type { AuditLoggerOptions } from "../audit/audit-logger.ts";
import type { ThrottleOptions } from "../auth/login-throttle.ts";
import type { ScryptParams } from "../auth/password-hash.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import type { Registry } from "../registry/registry.ts";
import type { ConfigSystemsOptions } from "./config-systems/config-systems.ts";
import type { EtcdBackendOptions } from "./etcd-backend.ts";
import type { StoreHousekeepingOptions } from "./store-housekeeping.ts";

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
  /** Auth tuning for tests (cheaper scrypt, throttle limits, sweep intervals). */
  auth?: {
    /** Cheaper scrypt for tests; the default costs about 0.1 s per hash. */
    scrypt?: ScryptParams;
    throttle?: ThrottleOptions;
    /** Failed client authentications at the OpenID provider, per client id ("username") and address. */
    clientThrottle?: ThrottleOptions;
    sweepIntervalMs?: number;
    /** How often the leader deletes expired SSO, OpenID and throttling state (default 5 minutes). */
    stateSweepIntervalMs?: number;
  };
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
  /** The Config's systems: maintenance checks, scheduled key rotations, Prometheus (src/platform/config-systems/). */
  configSystems?: ConfigSystemsOptions;
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
  /**
   * TEST-ONLY FAULT SEAM: called with each module's name before it starts ("store" first); a throw fails the start
   * there. Never set outside tests.
   */
  testOnlyBeforeStart?: (module: string) => void | Promise<void>;
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
