// A virtual cluster runtime's usage for cost control: its process's CPU and memory, the objects its syncer keeps in
// sync, the API requests its control plane served, and its store's bytes on disk.

import { join } from "node:path";
import { CLUSTER_DATABASE } from "../cluster-apiserver/cluster-api-server.ts";
import type { Registry } from "../http/prometheus.ts";
import { processUsage } from "../metrics/process-usage.ts";
import { counterTotal, filesBytes, type UsageReport } from "../metrics/usage.ts";
import type { SyncerStats } from "./syncer/stats.ts";

export function runtimeUsage(options: {
  registry: Registry;
  dataDir: string;
  syncer(): SyncerStats | undefined;
}): () => Promise<UsageReport> {
  const db = join(options.dataDir, CLUSTER_DATABASE);
  return async () => ({
    ...processUsage(),
    syncedObjects: options.syncer()?.syncedObjects ?? 0,
    apiRequests: await counterTotal(options.registry, "apiserver_request_total"),
    storageBytes: filesBytes([db, `${db}-wal`]),
  });
}
