// A virtual cluster's audit log: its API server's events by the `audit` settings (the platform's policy shape),
// written to a rotating file in the data directory and, when connected to a platform, sent to the platform's
// datastore through the connection (AuditForwarder), tagged there with this instance.

import { isAbsolute, join } from "node:path";
import type { Logger } from "pino";
import { AuditLogger } from "../audit/audit-logger.ts";
import { auditSettingsOf } from "../config/to-settings.ts";
import type { AuditConfig } from "../config/types.ts";
import type { PlatformCredentials } from "./connect/api-key-lookup.ts";
import { sendAuditBatch } from "./connect/audit-batch-sender.ts";
import { AuditForwarder, type ForwarderStats } from "./connect/audit-forwarder.ts";
import { DEFAULT_AUDIT_PATH } from "./settings/audit-settings.ts";

export interface RuntimeAuditOptions {
  settings: AuditConfig;
  dataDir: string;
  /** The platform connection, when there is one: where it is connected, with which credentials. */
  platform?: {
    instance(): { namespace: string; name: string } | undefined;
    credentials(): PlatformCredentials | undefined;
  };
  logger?: Logger;
  /** How often buffered events are sent (default 1 s). */
  forwardIntervalMs?: number;
}

export interface RuntimeAudit {
  hooks: AuditLogger["hooks"];
  forwarding(): ForwarderStats | undefined;
  /** Writes what is pending (file, then one attempt to send). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Undefined when the settings leave audit off. */
export function startRuntimeAudit(options: RuntimeAuditOptions): RuntimeAudit | undefined {
  if (!options.settings.enabled) return undefined;
  const path = options.settings.path || DEFAULT_AUDIT_PATH;
  const audit = auditSettingsOf({ ...options.settings, path: isAbsolute(path) ? path : join(options.dataDir, path) });
  const platform = options.platform;
  const forwarder = platform
    ? new AuditForwarder({
        target: {
          instance: () => (platform.credentials() ? platform.instance() : undefined),
          send: (instance, events) => sendAuditBatch(platform.credentials()!, instance, events),
        },
        intervalMs: options.forwardIntervalMs,
        logger: options.logger,
      })
    : undefined;
  const logger = new AuditLogger({
    settings: { current: () => ({ audit }), onChange: () => () => {} },
    logger: options.logger,
    tap: forwarder && ((lines) => forwarder.add(lines)),
  });
  return {
    hooks: logger.hooks,
    forwarding: () => forwarder?.stats(),
    async settled() {
      await logger.settled();
      await forwarder?.flush();
    },
    async close() {
      await logger.close();
      await forwarder?.close();
    },
  };
}
