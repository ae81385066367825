// The audit module: the audit log (file and datastore, following the Config's audit policy), the AuditEvent kind
// served from its datastore and the instances' event intake, and the API server's audit hooks. The logger is made
// with the module, before the Config is read, so it follows every change of it.

import type { Logger } from "pino";
import type { Registry as MetricsRegistry } from "prom-client";
import { auditEventDefinition } from "../apis/management/v1/auditevent.ts";
import { AuditLogger, type AuditLoggerOptions } from "../audit/audit-logger.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { AuditConfig } from "../config/types.ts";
import { keyCaller } from "../identity/key-caller.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { auditFileOf } from "./audit-directories.ts";
import { auditEventIntake } from "./audit-event-intake.ts";
import { AuditEventStore } from "./audit-event-store.ts";
import type { ManagementResourceParts } from "./management-resources.ts";
import type { PlatformModule } from "./platform-module.ts";

export interface AuditModuleOptions {
  settings: LiveSettings;
  dataDir: string;
  /** Where the audit log may be (audit-directories.ts). */
  auditDirs: string[];
  metrics: MetricsRegistry;
  /** Tuning of the audit datastore for tests (sweep interval, spool bound, retry delay). */
  datastoreTuning?: AuditLoggerOptions["datastoreTuning"];
  /** TEST-ONLY FAULT SEAM (AuditLoggerOptions.testOnlyRequestObjectFault); never set outside tests. */
  testOnlyRequestObjectFault?: AuditLoggerOptions["testOnlyRequestObjectFault"];
  logger?: Logger;
}

export class AuditModule implements PlatformModule {
  readonly name = "audit";
  readonly kinds: Pick<ManagementResourceParts, "audit">;
  private readonly audit: AuditLogger;

  constructor(options: AuditModuleOptions) {
    const { settings, logger, auditDirs } = options;
    const audit = new AuditLogger({
      settings,
      logger,
      metrics: options.metrics,
      dataDir: options.dataDir,
      datastoreTuning: options.datastoreTuning,
      filePath: (path) => auditFileOf(path, auditDirs, (message) => logger?.warn(message)),
      testOnlyRequestObjectFault: options.testOnlyRequestObjectFault,
    });
    this.audit = audit;
    this.kinds = {
      audit: {
        events: {
          ...auditEventDefinition,
          serve: (definition: ResourceDefinition) =>
            new AuditEventStore(definition, { audit, isAdmin: (context) => keyCaller.managesAll(context) }),
        },
        instanceEvents: auditEventIntake({ audit, auditConfig: () => settings.current().audit as AuditConfig }),
      },
    };
  }

  async start(): Promise<void> {}

  /** The API server's hooks: every request's events. */
  get hooks(): AuditLogger["hooks"] {
    return this.audit.hooks;
  }

  async close(): Promise<void> {
    await this.audit.close();
  }
}
