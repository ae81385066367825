// `virtualcluster platform start`: runs the management platform in this process until SIGINT/SIGTERM.
// The server modules load only when the command runs, so the other commands start quickly.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import {
  DEFAULT_HEARTBEAT_SECONDS,
  DEFAULT_MISSED_HEARTBEATS,
  type HeartbeatBounds,
  heartbeatBounds,
} from "../platform/projects/heartbeat-bounds.ts";
import { addConfigSystemsOptions, type ConfigSystemsFlags, configSystemsOptions } from "./config-systems-options.ts";
import { addLogOptions, commandLogger, type LogFlags } from "./log-options.ts";
import { releaseMemoryAfterBursts } from "./platform-memory.ts";
import { addServerLimitOptions, type ServerLimitFlags, serverLimitsFromFlags } from "./server-limit-options.ts";
import { stopOnSignal } from "./stop-on-signal.ts";
import {
  addStoreHousekeepingOptions,
  type StoreHousekeepingFlags,
  storeHousekeepingOptions,
} from "./store-housekeeping-options.ts";
import { addStoreOptions, type StoreFlags, storeSelection } from "./store-options.ts";

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("must be a port number (0-65535)");
  return n;
}

/** An https:// base URL without a trailing slash; anything else is refused naming the form. */
function httpsBaseUrl(value: string): string {
  const url = URL.parse(value);
  if (url?.protocol !== "https:" || url.pathname !== "/" || url.search || url.hash) {
    throw new InvalidArgumentError("expected https://host:port (no path)");
  }
  return value.replace(/\/+$/, "");
}

function seconds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError("must be a number of seconds (0 or more)");
  return n;
}

interface StartOptions extends ServerLimitFlags, LogFlags, StoreFlags, StoreHousekeepingFlags, ConfigSystemsFlags {
  instanceHeartbeatSeconds?: number;
  instanceOfflineAfterSeconds?: number;
  clusterHeartbeatSeconds?: number;
  advertiseUrl?: string;
  dataDir: string;
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
  accessKeyMaxTtlSeconds?: number;
  loginAccessKeyTtlSeconds?: number;
  config?: string;
  allowInsecurePermissions?: boolean;
  auditDir?: string[];
  encryptionKeyFile?: string;
}

export function addStartCommand(platform: Command): void {
  const start = platform
    .command("start")
    .description("Run the management platform (HTTPS, storage in --data-dir)")
    .option("--data-dir <dir>", "data directory (storage, certificates, admin credentials)", "./data")
    .option("--host <host>", "address to listen on and to put in certificates and kubeconfigs", "127.0.0.1")
    .option("--port <port>", "port to listen on", port, 8443)
    .option("--tls-cert <file>", "serving certificate (PEM) instead of the generated one")
    .option("--tls-key <file>", "key of --tls-cert (PEM)")
    .option(
      "--access-key-max-ttl-seconds <seconds>",
      "maximum life of any access key; longer ttls are reduced to it (0: no limit)",
      seconds,
    )
    .option(
      "--login-access-key-ttl-seconds <seconds>",
      "life of access keys from password login (default 20 days; 0: kept until logout)",
      seconds,
    )
    .option("--config <file>", "platform config file (YAML): loaded at start, watched, and applied on change")
    .option(
      "--audit-dir <dir>",
      "the audit log's directory instead of <data-dir>/audit (repeatable); it may not overlap pki/, the store or the socket",
      (dir: string, dirs: string[] = []) => [...dirs, dir],
    )
    .option(
      "--encryption-key-file <file>",
      "keys that encrypt the store's secret values (default: <data-dir>/pki/encryption.key, made on first start)",
    )
    .option(
      "--instance-heartbeat-seconds <seconds>",
      `how often virtual clusters report to the platform; they are told through selves (default ${DEFAULT_HEARTBEAT_SECONDS})`,
      seconds,
    )
    .option(
      "--instance-offline-after-seconds <seconds>",
      `mark a virtual cluster instance offline after this long without a heartbeat; at least twice the heartbeat (default ${DEFAULT_MISSED_HEARTBEATS} heartbeats)`,
      seconds,
    )
    .option(
      "--cluster-heartbeat-seconds <seconds>",
      "how often connected clusters' agents report (default 30); a cluster is offline after three missed",
      seconds,
    )
    .option(
      "--advertise-url <url>",
      "this replica's address as the other replicas reach it (https://host:port; default: the listen address)",
      httpsBaseUrl,
    )
    .option(
      "--allow-insecure-permissions",
      "start even when group or others may read or write the data directory or a key file (not recommended)",
    );
  addLogOptions(addServerLimitOptions(addConfigSystemsOptions(addStoreHousekeepingOptions(addStoreOptions(start)))))
    .addHelpText(
      "after",
      "\nExamples:\n  virtualcluster platform start\n  virtualcluster platform start --data-dir /var/lib/vcp --host 0.0.0.0 --port 443" +
        "\n  virtualcluster platform start --store etcd --etcd-endpoints https://10.0.0.1:2379,https://10.0.0.2:2379 \\" +
        "\n    --etcd-cafile ca.pem --etcd-certfile client.pem --etcd-keyfile client-key.pem --encryption-key-file enc.key",
    )
    .action(async (opts: StartOptions) => {
      if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey)) {
        platform.error("error: --tls-cert and --tls-key go together");
      }
      let etcd: ReturnType<typeof storeSelection>;
      let store: ReturnType<typeof storeHousekeepingOptions>;
      let liveness: HeartbeatBounds;
      try {
        etcd = storeSelection(opts);
        store = storeHousekeepingOptions(opts, etcd !== undefined);
        liveness = heartbeatBounds({
          heartbeatSeconds: opts.instanceHeartbeatSeconds,
          offlineAfterSeconds: opts.instanceOfflineAfterSeconds,
        });
      } catch (error) {
        platform.error(`error: ${(error as Error).message}`);
      }
      const [logger, { ADMIN_KEY_FILE, ADMIN_PASSWORD_FILE }, { ADMIN_KUBECONFIG_FILE, startPlatform }, settings] =
        await Promise.all([
          commandLogger(opts),
          import("../platform/bootstrap.ts"),
          import("../platform/platform.ts"),
          import("../config/settings.ts"),
        ]);
      const { defaultSettings, LiveSettings } = settings;
      // Until the Config resource drives them, these flags seed the live settings.
      const initial = defaultSettings();
      if (opts.accessKeyMaxTtlSeconds !== undefined) initial.auth.accessKeyMaxTTLSeconds = opts.accessKeyMaxTtlSeconds;
      if (opts.loginAccessKeyTtlSeconds !== undefined) {
        initial.auth.loginAccessKeyTTLSeconds = opts.loginAccessKeyTtlSeconds;
      }
      const running = await startPlatform({
        settings: new LiveSettings(initial),
        dataDir: opts.dataDir,
        allowInsecurePermissions: opts.allowInsecurePermissions === true,
        auditDirs: opts.auditDir,
        host: opts.host,
        port: opts.port,
        tlsCertFile: opts.tlsCert,
        tlsKeyFile: opts.tlsKey,
        encryptionKeyFile: opts.encryptionKeyFile,
        etcd,
        store,
        configFile: opts.config,
        instanceHeartbeatMs: liveness.heartbeatSeconds * 1000,
        instanceOfflineAfterMs: liveness.offlineAfterSeconds * 1000,
        clusterHeartbeatMs: opts.clusterHeartbeatSeconds ? opts.clusterHeartbeatSeconds * 1000 : undefined,
        advertiseUrl: opts.advertiseUrl,
        limits: serverLimitsFromFlags(opts),
        configSystems: configSystemsOptions(opts),
        logger,
      });
      // One write: whoever watches for the "listening" line also gets the shown-once credentials with it.
      const lines = [`Platform listening on ${running.url}\n`];
      if (running.consoleUrl) lines.push(`Web console: ${running.consoleUrl}\n`);
      if (running.createdAdminKey) {
        lines.push(
          `\nCreated user "admin". Its access key is shown only this once:\n\n  ${running.createdAdminKey}\n\n` +
            `It is also stored in ${join(running.dataDir, ADMIN_KEY_FILE)} (mode 0600).\n`,
        );
      }
      if (running.createdAdminPassword) {
        lines.push(
          `\nIts password (for the web console and POST /auth/password/login) is shown only this once:\n\n  ${running.createdAdminPassword}\n\n` +
            `It is also stored in ${join(running.dataDir, ADMIN_PASSWORD_FILE)} (mode 0600).\n`,
        );
      }
      // Another replica on the same etcd may have made the admin: then this data directory has no kubeconfig.
      const kubeconfig = join(running.dataDir, ADMIN_KUBECONFIG_FILE);
      if (existsSync(kubeconfig)) lines.push(`Try: kubectl --kubeconfig ${kubeconfig} get users\n`);
      // Before the line that says it is up: whoever reads it may stop it at once.
      stopOnSignal(logger, () => running.close());
      releaseMemoryAfterBursts();
      process.stdout.write(lines.join(""));
    });
}
