// The control socket module: backups (a consistent snapshot of the SQLite store) and store info over a unix socket
// in the data directory (control-socket.ts). On etcd there is none: backups of an etcd store are etcd's own
// (etcdctl snapshot save).

import type { Logger } from "pino";
import { startControlSocket } from "./control-socket.ts";
import type { PlatformModule } from "./platform-module.ts";
import type { StoreModule } from "./store-module.ts";

export class ControlSocketModule implements PlatformModule {
  readonly name = "control-socket";
  private readonly options: { dataDir: string; store: StoreModule; logger?: Logger };
  private socket?: { close(): Promise<void> };

  constructor(options: { dataDir: string; store: StoreModule; logger?: Logger }) {
    this.options = options;
  }

  async start(): Promise<void> {
    const { dataDir, store, logger } = this.options;
    if (store.etcd) return;
    const storeInfo = () => store.housekeeping.monitor.info();
    this.socket = await startControlSocket({ dataDir, storage: store.storage, storeInfo, logger });
  }

  async close(): Promise<void> {
    await this.socket?.close();
    this.socket = undefined;
  }
}
