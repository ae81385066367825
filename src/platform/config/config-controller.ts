// Keeps the live settings equal to the stored platform config: makes sure the singleton exists (empty config,
// all defaults), applies it, then applies every change the store's watch reports. API writes and the config file
// both end up here, so there is one path from a write to its effect (milliseconds, no polling).

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import { parseConfigText } from "../../config/parse.ts";
import type { LiveSettings, PlatformSettings } from "../../config/settings.ts";
import { toPlatformSettings } from "../../config/to-settings.ts";
import { trustedConfigContext } from "../../config/trusted-context.ts";
import type { PlatformConfig } from "../../config/types.ts";
import type { ResourceStore, WatchHandle } from "../../registry/types.ts";

const AGENT = "platform-config-controller";
const RESTART_DELAY_MS = 200;

export interface ConfigControllerOptions {
  /** The configs store. */
  store: ResourceStore;
  name: string;
  settings: LiveSettings;
  logger?: Logger;
}

export class ConfigController {
  private readonly options: ConfigControllerOptions;
  private readonly seed: PlatformSettings;
  private handle: WatchHandle | undefined;
  private closed = false;
  private config: PlatformConfig = {};
  private revision = 0;
  private readonly waiters = new Set<{ revision: number; resolve: () => void }>();

  private constructor(options: ConfigControllerOptions) {
    this.options = options;
    this.seed = options.settings.current();
  }

  static async start(options: ConfigControllerOptions): Promise<ConfigController> {
    const controller = new ConfigController(options);
    await controller.sync();
    return controller;
  }

  /** The config in force, with its secrets (for in-process consumers; never for a response or a log line). */
  current(): PlatformConfig {
    return this.config;
  }

  /** The resourceVersion of the config in force. */
  appliedRevision(): number {
    return this.revision;
  }

  /** Resolves once a config of at least this resourceVersion is in force. */
  waitFor(revision: number): Promise<void> {
    if (this.revision >= revision) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ revision, resolve }));
  }

  close(): void {
    this.closed = true;
    this.handle?.close();
  }

  /**
   * Lists the singleton and watches from the list's revision: the store's revision now, not the object's own (which
   * is as old as the last Config write and may be compacted away). A watch that ends, compacted or otherwise, is
   * followed by one new list and a watch from there, as an informer re-lists after 410 Gone.
   */
  private async sync(): Promise<void> {
    const { object, revision } = await this.read();
    this.apply(object);
    this.handle = await this.options.store.watch(
      trustedConfigContext(AGENT),
      { fieldSelector: `metadata.name=${this.options.name}`, resourceVersion: revision },
      {
        send: (event) => {
          if (event.type === "ADDED" || event.type === "MODIFIED") this.apply(event.object as KubeObject);
          return true;
        },
        end: (reason) => {
          if (this.closed) return;
          this.options.logger?.info({ reason }, "platform config watch ended; listing again");
          // Expired: the history is gone but the store is fine, so list again at once; anything else may be a fault.
          setTimeout(() => void this.restart(), reason === "expired" ? 0 : RESTART_DELAY_MS).unref();
        },
      },
    );
  }

  private async restart(): Promise<void> {
    if (this.closed) return;
    try {
      await this.sync();
    } catch (error) {
      this.options.logger?.error({ err: String(error) }, "platform config watch could not restart");
      setTimeout(() => void this.restart(), RESTART_DELAY_MS * 10).unref();
    }
  }

  /** The singleton (made when missing) and the revision of the list that read it, which a watch resumes from. */
  private async read(): Promise<{ object: KubeObject; revision: string }> {
    const list = async () =>
      this.options.store.list(trustedConfigContext(AGENT), { fieldSelector: `metadata.name=${this.options.name}` });
    let listed = await list();
    if (listed.items.length === 0) {
      await this.ensureSingleton();
      listed = await list();
    }
    const object = listed.items[0] as KubeObject | undefined;
    if (!object) throw new Error(`the platform config ${this.options.name} vanished while it was read`);
    return { object, revision: listed.metadata.resourceVersion ?? object.metadata.resourceVersion ?? "0" };
  }

  private async ensureSingleton(): Promise<KubeObject> {
    const { store, name } = this.options;
    const ref = { name };
    try {
      return await store.get(trustedConfigContext(AGENT), ref);
    } catch (error) {
      if (!isStatusError(error) || error.code !== 404) throw error;
    }
    const d = store.definition;
    // No spec.raw at all: an empty config whose raw field no manager owns, so the first apply does not conflict.
    const empty = { apiVersion: `${d.group}/${d.version}`, kind: d.kind, metadata: { name }, spec: {} };
    try {
      return await store.create(trustedConfigContext(AGENT), undefined, empty, { fieldManager: "platform" });
    } catch (error) {
      if (!isStatusError(error) || error.code !== 409) throw error;
      return store.get(trustedConfigContext(AGENT), ref);
    }
  }

  private apply(object: KubeObject): void {
    const raw = (object.spec as { raw?: unknown } | undefined)?.raw;
    const parsed = parseConfigText(typeof raw === "string" ? raw : "");
    if (parsed.errors.length > 0) {
      // Stored configs were checked on write; this only happens after a downgrade. Keep what is in force.
      this.options.logger?.error({ fields: parsed.errors.map((e) => e.field) }, "stored platform config is invalid");
    } else {
      this.config = parsed.config;
      const next = toPlatformSettings(parsed.explicit, this.seed);
      // A write of the platform-owned status (conditions, maintenance) leaves the settings as they are.
      if (JSON.stringify(next) !== JSON.stringify(this.options.settings.current())) this.options.settings.update(next);
    }
    this.revision = Number(object.metadata.resourceVersion ?? 0);
    for (const waiter of this.waiters) {
      if (this.revision >= waiter.revision) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
    if (parsed.errors.length === 0) {
      this.options.logger?.info({ resourceVersion: object.metadata.resourceVersion }, "platform config applied");
    }
  }
}
