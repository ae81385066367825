// The single sign-on module: logins through the identity providers the Config names (OIDC, SAML, GitHub, ...), on
// the identity module's keys and cookie secrets (sso.ts); at start, subjects stored before connector names
// qualified them are qualified (once); the leader deletes expired login state.

import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { GROUP } from "../apis/management/v1/common.ts";
import { SSO_STATE_PREFIX } from "../identity/sso/login-state.ts";
import { qualifySsoSubjects } from "../identity/sso/qualify-sso-subjects.ts";
import { sweepExpired } from "../storage/expiring-records.ts";
import { expiredStateSweeper } from "./expired-state-sweeper.ts";
import type { IdentityServices } from "./identity-module.ts";
import type { ModuleContext, ModuleRoutes, PlatformModule, TaskMaker } from "./platform-module.ts";
import { platformSso } from "./sso.ts";

export interface SsoModuleOptions {
  identity: IdentityServices;
  stateSweepIntervalMs?: number;
  logger?: Logger;
}

export class SsoModule implements PlatformModule {
  readonly name = "sso";
  private readonly options: SsoModuleOptions;
  private plugin?: { routes: (app: FastifyInstance) => void; close(): void };

  constructor(options: SsoModuleOptions) {
    this.options = options;
  }

  /** Runs once the Config is in force (its connectors name the subjects). */
  async start({ registry }: ModuleContext): Promise<void> {
    const { identity, logger } = this.options;
    const { storage, settings } = identity;
    await qualifySsoSubjects({
      storage,
      store: (plural) => registry.genericStore(GROUP, plural)!,
      settings: () => settings.current().auth.sso,
      logger,
    });
    this.plugin = platformSso({
      storage,
      index: identity.index,
      fresh: identity.fresh,
      settings,
      store: (plural) => identity.store(plural),
      deleteKey: (name, uid) => identity.deleteKey(name, uid),
      baseUrl: () => identity.issuer(),
      cookieKeys: identity.keys().cookieKeys,
      logger,
      keyOf: (accessKey) => identity.keyOf(accessKey),
    });
  }

  routes(): ModuleRoutes {
    return { plugins: this.plugin ? [this.plugin.routes] : [] };
  }

  tasks(): TaskMaker[] {
    const { identity, stateSweepIntervalMs, logger } = this.options;
    const storage = identity.storage;
    return [
      () =>
        expiredStateSweeper({
          jobs: [{ name: "single sign-on", sweep: () => sweepExpired({ storage, prefix: SSO_STATE_PREFIX }) }],
          intervalMs: stateSweepIntervalMs,
          logger,
        }),
    ];
  }

  async close(): Promise<void> {
    this.plugin?.close();
    this.plugin = undefined;
  }
}
