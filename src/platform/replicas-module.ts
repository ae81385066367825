// The replicas module: leadership (an etcd election, or this process alone on SQLite), this replica's record and the
// list of replicas (/platform/replicas). At start it runs every module's background tasks on the leadership; its
// close stops them and gives leadership up, before the modules they use close (it starts after them).

import { hostname } from "node:os";
import type { Logger } from "pino";
import { platformVersion } from "../apimachinery/version.ts";
import type { EtcdStore } from "../storage/etcd/etcd-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { etcdLeadership, type Leadership, soleLeadership } from "./leader.ts";
import type { ModuleRoutes, PlatformModule, TaskMaker } from "./platform-module.ts";
import { ReplicaPresence } from "./replica-presence.ts";
import { replicaRoutes } from "./replica-routes.ts";

export interface ReplicasModuleOptions {
  storage: KeyValueStore;
  /** The etcd store replicas share; without it this process is the only one, always leading. */
  etcd?: EtcdStore;
  /** Every module's background tasks, run while this replica leads. */
  tasks(): TaskMaker[];
  logger?: Logger;
}

export class ReplicasModule implements PlatformModule {
  readonly name = "replicas";
  private readonly options: ReplicasModuleOptions;
  private leadership?: Leadership;
  private presence?: ReplicaPresence;

  constructor(options: ReplicasModuleOptions) {
    this.options = options;
  }

  async start(): Promise<void> {
    const { storage, etcd, logger } = this.options;
    // Background controllers run on one replica: the elected leader on etcd, this process on SQLite.
    const leadership = etcd
      ? etcdLeadership({ store: etcd, identity: `${hostname()}/${process.pid}`, logger })
      : soleLeadership(logger);
    this.leadership = leadership;
    this.presence = new ReplicaPresence({
      storage,
      identity: leadership.identity,
      version: platformVersion().gitVersion,
      store: etcd ? "etcd" : "sqlite",
      leading: () => leadership.leading,
      onError: (error) => logger?.warn({ err: String(error) }, "renewing this replica's record failed"),
    });
    await this.presence.start();
    for (const make of this.options.tasks()) leadership.run(make);
    // The record says at once when this replica starts or stops leading.
    const presence = this.presence;
    leadership.run(() => ({
      name: "replica record",
      start: () => presence.renew(),
      stop: () => void presence.renew().catch(() => undefined),
    }));
  }

  routes(): ModuleRoutes {
    const { presence, leadership } = this;
    if (!presence || !leadership) return {};
    return { plugins: [replicaRoutes({ replicas: () => presence.list(), identity: leadership.identity })] };
  }

  async close(): Promise<void> {
    const { presence, leadership } = this;
    this.presence = undefined;
    this.leadership = undefined;
    await presence?.stop().catch(() => undefined);
    await leadership?.stop();
  }
}
