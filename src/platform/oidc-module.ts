// The OpenID provider module: the platform as an OpenID provider for other tools, under /oidc (oidc.ts), on the
// identity module's signing keys and cookie secrets. Wrong client secrets are throttled (shared by the replicas on a
// shared store); the leader deletes expired grants and failure counts.

import type { Logger } from "pino";
import { LoginThrottle, type ThrottleOptions } from "../auth/login-throttle.ts";
import { OIDC_MOUNT } from "../identity/oidc-provider/platform-oidc-provider.ts";
import { sweepExpired } from "../storage/expiring-records.ts";
import { expiredStateSweeper } from "./expired-state-sweeper.ts";
import type { IdentityServices } from "./identity-module.ts";
import { createPlatformOidc, type PlatformOidc } from "./oidc.ts";
import type { ModuleRoutes, PlatformModule, TaskMaker } from "./platform-module.ts";
import { CLIENT_AUTH_FAILURES_PREFIX, shareLoginThrottle } from "./shared-login-throttle.ts";

export interface OidcModuleOptions {
  identity: IdentityServices;
  /** Failed client authentications, per client id ("username") and address. */
  clientThrottle?: ThrottleOptions;
  /** Other replicas share the store (etcd): failure counts are shared. */
  sharedStore?: boolean;
  stateSweepIntervalMs?: number;
  logger?: Logger;
}

export class OidcModule implements PlatformModule {
  readonly name = "oidc";
  private readonly options: OidcModuleOptions;
  private readonly clientThrottle: LoginThrottle;
  private sharedThrottle?: { close(): void };
  private oidc?: PlatformOidc;

  constructor(options: OidcModuleOptions) {
    this.options = options;
    // A client id counts as a username does (10 tries from one address, then waits; 100 from everywhere).
    this.clientThrottle = new LoginThrottle(
      options.clientThrottle ?? { failuresPerPair: 10, failuresPerUsername: 100, failuresPerAddress: 20 },
    );
  }

  async start(): Promise<void> {
    const { identity, logger } = this.options;
    const { storage } = identity;
    if (this.options.sharedStore) {
      const prefix = CLIENT_AUTH_FAILURES_PREFIX;
      this.sharedThrottle = await shareLoginThrottle({ storage, throttle: this.clientThrottle, prefix, logger });
    }
    const keys = identity.keys();
    this.oidc = await createPlatformOidc({
      storage,
      index: identity.index,
      fresh: identity.fresh,
      settings: identity.settings,
      signingKeys: keys.signingKeys,
      baseUrl: () => identity.issuer(),
      keyOf: (accessKey) => identity.keyOf(accessKey),
      deleteKey: (name, uid) => identity.deleteKey(name, uid),
      async createKey(spec) {
        const created = await identity.createKey("oidc-refresh-", spec);
        return { name: created.metadata.name ?? "", uid: created.metadata.uid ?? "" };
      },
      clientThrottle: this.clientThrottle,
      cookieKeys: keys.cookieKeys,
      logger,
    });
  }

  routes(): ModuleRoutes {
    return { publicPaths: [OIDC_MOUNT], plugins: this.oidc ? [this.oidc.plugin] : [] };
  }

  tasks(): TaskMaker[] {
    const { identity, stateSweepIntervalMs, logger } = this.options;
    const { storage } = identity;
    const oidc = this.oidc;
    const jobs = [
      ...(oidc ? [{ name: "OpenID provider", sweep: () => oidc.sweep() }] : []),
      { name: "client failures", sweep: () => sweepExpired({ storage, prefix: CLIENT_AUTH_FAILURES_PREFIX }) },
    ];
    return [() => expiredStateSweeper({ jobs, intervalMs: stateSweepIntervalMs, logger })];
  }

  async close(): Promise<void> {
    this.sharedThrottle?.close();
    this.sharedThrottle = undefined;
  }
}
