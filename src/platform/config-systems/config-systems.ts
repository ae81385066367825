// The Config's systems as the platform composes them (called by platform.ts; each system's own wiring is a file
// of this folder): the Config status writer and the maintenance window (cloud), made early so store housekeeping
// can ask the window; then, once the Config is in force, the systems that run on the leader.

import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { AppsCatalog } from "../../apps/apps-catalog.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { formatBytes } from "../../utils/byte-size.ts";
import { appsRoutes } from "./apps-routes.ts";
import type { BackgroundTask } from "./background-task.ts";
import { ConfigStatusWriter } from "./config-status.ts";
import { CostControl, type ScrapeKey } from "./cost-control.ts";
import { federatedClusters } from "./federated-clusters.ts";
import { MaintenanceScheduler, type WindowTask } from "./maintenance.ts";
import { scheduledRotationTask } from "./scheduled-rotations.ts";
import { SecretStoreSync } from "./secret-store-sync.ts";

/** `platform start` flags of the Config's systems (src/cli/config-systems-options.ts). */
export interface ConfigSystemsOptions {
  /** How often the maintenance window is checked (default 1 minute). */
  maintenanceCheckIntervalMs?: number;
  /** --signing-key-rotation-interval: rotate the token-signing key this often (default: never). */
  signingKeyRotationIntervalMs?: number;
  /** --encryption-key-rotation-interval: rotate the store's encryption key this often (default: never). */
  encryptionKeyRotationIntervalMs?: number;
  /** --prometheus-binary: the Prometheus to run when costControl is enabled (default: `prometheus` on PATH). */
  prometheusBinary?: string;
  /** --prometheus-url: a Prometheus the user runs; the platform runs none and queries this one. */
  prometheusUrl?: string;
  /** The maintenance clock (tests). */
  now?: () => Date;
}

export interface ConfigSystemsParts {
  settings: LiveSettings;
  dataDir: string;
  /** The user whose scrape-only key Prometheus uses (the bootstrap admin). */
  adminUser: string;
  storage: KeyValueStore;
  registry: Registry;
  rotateSigningKey(): Promise<{ keyID: string }>;
  rotateEncryptionKey(): Promise<{ keyID: string; reencrypted: number }>;
  options?: ConfigSystemsOptions;
  logger?: Logger;
}

export class ConfigSystems {
  readonly status: ConfigStatusWriter;
  readonly maintenance: MaintenanceScheduler;
  readonly secretStore: SecretStoreSync;
  /** The apps catalog: every replica reads the repositories and serves it. */
  readonly apps: AppsCatalog;
  readonly cost: CostControl;
  private readonly parts: ConfigSystemsParts;
  private server?: { url: string; caPem?: string };
  private unsubscribe?: () => void;

  constructor(parts: ConfigSystemsParts) {
    this.parts = parts;
    this.status = new ConfigStatusWriter(parts.registry, parts.logger);
    this.maintenance = new MaintenanceScheduler({
      settings: parts.settings,
      status: this.status,
      tasks: windowTasks(parts),
      now: parts.options?.now,
      checkIntervalMs: parts.options?.maintenanceCheckIntervalMs,
      logger: parts.logger,
    });
    this.cost = new CostControl({
      settings: parts.settings,
      status: this.status,
      dataDir: parts.dataDir,
      binary: parts.options?.prometheusBinary,
      externalUrl: parts.options?.prometheusUrl,
      platform: () => this.server,
      createScrapeKey: () => createScrapeKey(parts.registry, parts.adminUser),
      deleteKey: async (name) => {
        await parts.registry.store(GROUP, "ownedaccesskeys")?.delete(keysContext(), { name }, {});
      },
      extraTargets: () => federatedClusters(parts.registry),
      unestimatedClusters: () =>
        unestimatedClusters(parts.registry, parts.settings.current().costControl.costEstimatorReplicas),
      logger: parts.logger,
    });
    this.apps = new AppsCatalog({ settings: () => parts.settings.current().apps, logger: parts.logger });
    this.secretStore = new SecretStoreSync({
      registry: parts.registry,
      settings: parts.settings,
      status: this.status,
      logger: parts.logger,
    });
  }

  /** Starts what runs on every replica, once the stored Config is in force: the apps catalog. */
  start(): void {
    this.apps.start();
    this.unsubscribe = this.parts.settings.onChange((next, previous) => {
      if (JSON.stringify(next.apps) !== JSON.stringify(previous.apps)) this.apps.reconfigure();
    });
  }

  /** Routes served by the API server (the apps catalog, the Cost page's report). */
  plugins(): ((app: FastifyInstance) => void)[] {
    return [appsRoutes(this.apps), this.cost.routes()];
  }

  /** Where the platform listens (Prometheus scrapes it there); call before the leader tasks start. */
  listening(server: { url: string; caPem?: string }): void {
    this.server = server;
  }

  /** What runs on the leader (each made anew per term), started once the stored Config is in force. */
  leaderTasks(): (() => BackgroundTask)[] {
    return [() => this.maintenance.leaderTask(), () => this.secretStore.leaderTask(), () => this.cost.leaderTask()];
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    this.apps.close();
    await this.cost.close();
    await this.secretStore.idle();
    await this.status.settled();
  }
}

function windowTasks(parts: ConfigSystemsParts): WindowTask[] {
  const { storage, options = {} } = parts;
  const tasks: WindowTask[] = [];
  const { rebuild } = storage;
  if (rebuild) {
    tasks.push({
      name: "store rebuild",
      when: "window",
      async run() {
        const run = await rebuild.call(storage);
        if (!run) return "skipped (a snapshot was being taken)";
        return `rebuilt in ${(run.durationMs / 1000).toFixed(1)} s, ${formatBytes(run.freedBytes)} returned`;
      },
    });
  }
  if (options.signingKeyRotationIntervalMs) {
    tasks.push(
      scheduledRotationTask(storage, {
        name: "signing-key",
        intervalMs: options.signingKeyRotationIntervalMs,
        rotate: async () => `new key ${(await parts.rotateSigningKey()).keyID}`,
      }),
    );
  }
  if (options.encryptionKeyRotationIntervalMs) {
    tasks.push(
      scheduledRotationTask(storage, {
        name: "encryption-key",
        intervalMs: options.encryptionKeyRotationIntervalMs,
        rotate: async () => {
          const result = await parts.rotateEncryptionKey();
          return `new key ${result.keyID}, ${result.reencrypted} values re-encrypted`;
        },
      }),
    );
  }
  return tasks;
}

const keysContext = () => systemContext("system:cost-control", "cost-control");

/** Clusters whose cost estimator is off: their spec.costControl.costEstimator.replicas, else the Config's, is 0. */
async function unestimatedClusters(registry: Registry, defaultReplicas: number): Promise<string[]> {
  const store = registry.store(GROUP, "clusters");
  if (!store) return [];
  const list = await store.list(keysContext(), {});
  return (list.items as Cluster[])
    .filter((cluster) => (cluster.spec?.costControl?.costEstimator?.replicas ?? defaultReplicas) === 0)
    .map((cluster) => cluster.metadata.name ?? "");
}

/** A key of `user` that may only read /metrics and the clusters' federation: what Prometheus scrapes with. */
async function createScrapeKey(registry: Registry, user: string): Promise<ScrapeKey> {
  const store = registry.store(GROUP, "ownedaccesskeys");
  if (!store) throw new Error("ownedaccesskeys is not registered");
  const created = await store.create(
    keysContext(),
    undefined,
    {
      apiVersion: `${GROUP}/v1`,
      kind: "OwnedAccessKey",
      metadata: { generateName: "prometheus-scrape-" },
      spec: {
        type: "User",
        user,
        displayName: "Prometheus of cost control (reads /metrics and the clusters' federated usage only)",
        scope: { rules: [{ verbs: ["get"], nonResourceURLs: ["/metrics", "/platform/clusters/*"] }] },
      },
    },
    { fieldManager: "cost-control" },
  );
  return { name: created.metadata.name ?? "", key: String((created.spec as { key?: unknown }).key) };
}
