// What `virtualcluster platform store-info` reports: the store's size, what of it holds data, its free pages and
// housekeeping. SQLite: a running platform answers on its control socket (its numbers include the last compaction
// and vacuum, the quota and the free-disk warning); a stopped one is read from its file. etcd: each member is asked.
// `--vacuum` rebuilds a stopped platform's file (the one-time conversion a store too large for the start skipped).

import { existsSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { join, resolve } from "node:path";
import { EtcdClient, toBase64 } from "../storage/etcd/etcd-client.ts";
import { EtcdKeyspace } from "../storage/etcd/etcd-keyspace.ts";
import { EtcdMaintenance } from "../storage/etcd/etcd-maintenance.ts";
import { etcdCompactedRevision } from "../storage/etcd/etcd-store.ts";
import { type ConversionEvent, vacuumStoreFile } from "../storage/sqlite/auto-vacuum.ts";
import { storeFileStats } from "../storage/sqlite/file-stats.ts";
import { http } from "../utils/node-http.ts";
import { STORE_INFO_PATH } from "./control-socket.ts";
import { type EtcdBackendOptions, readEtcdTls } from "./etcd-backend.ts";
import { CONTROL_SOCKET_FILE, STORE_FILE } from "./store-files.ts";
import { DEFAULT_DISK_WARNING_BYTES, type StoreInfo } from "./store-monitor.ts";

export interface StoreInfoReport {
  /** running: the serving platform answered; stopped: read from the file; etcd: the members answered. */
  source: "running" | "stopped" | "etcd";
  /** SQLite: the store file. */
  path?: string;
  /** etcd: the platform's key prefix. */
  prefix?: string;
  info: StoreInfo;
}

export async function readStoreInfo(options: { dataDir: string; etcd?: EtcdBackendOptions }): Promise<StoreInfoReport> {
  const dataDir = resolve(options.dataDir);
  if (options.etcd) return readEtcd(options.etcd);
  const path = join(dataDir, STORE_FILE);
  const running = await askRunning(dataDir);
  if (running) return { source: "running", path, info: running };
  if (!existsSync(path)) throw new Error(`there is no platform store in ${dataDir} (no ${STORE_FILE})`);
  let stats: ReturnType<typeof storeFileStats>;
  try {
    stats = storeFileStats(path);
  } catch (error) {
    if (error instanceof Error && /locked by another process/.test(error.message)) {
      throw new Error(
        `a platform is running on ${dataDir} but does not answer on ${join(dataDir, CONTROL_SOCKET_FILE)}: retry once it has started`,
        { cause: error },
      );
    }
    throw error;
  }
  const fs = await statfs(dataDir);
  const freeBytes = fs.bavail * fs.bsize;
  return {
    source: "stopped",
    path,
    info: {
      stats,
      quota: { bytes: 0, reached: false },
      disk: {
        path: dataDir,
        freeBytes,
        sizeBytes: fs.blocks * fs.bsize,
        warningBytes: DEFAULT_DISK_WARNING_BYTES,
        low: freeBytes < DEFAULT_DISK_WARNING_BYTES,
      },
      warnings: [],
    },
  };
}

/** `store-info --vacuum`: rebuilds the stopped platform's store file (fails while one serves it). */
export function vacuumStopped(dataDir: string): ConversionEvent {
  try {
    return vacuumStoreFile(join(resolve(dataDir), STORE_FILE));
  } catch (error) {
    if (error instanceof Error && /locked by another process/.test(error.message)) {
      throw new Error(`a platform is running on ${dataDir}: stop it first (--vacuum rebuilds the file)`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** The running platform's answer on its control socket; undefined when none listens. */
async function askRunning(dataDir: string): Promise<StoreInfo | undefined> {
  const socketPath = join(dataDir, CONTROL_SOCKET_FILE);
  if (!existsSync(socketPath)) return undefined;
  return new Promise((done, reject) => {
    const call = http.request({ socketPath, path: STORE_INFO_PATH, method: "GET" }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => {
        if (response.statusCode !== 200) {
          reject(new Error(`the platform answered ${response.statusCode}: ${body.slice(0, 200)}`));
          return;
        }
        try {
          done(JSON.parse(body) as StoreInfo);
        } catch {
          reject(new Error("the platform's answer is not JSON"));
        }
      });
    });
    call.once("error", (error: NodeJS.ErrnoException) => {
      // A socket file a killed platform left behind.
      if (error.code === "ECONNREFUSED" || error.code === "ENOENT") done(undefined);
      else reject(error);
    });
    call.end();
  });
}

async function readEtcd(options: EtcdBackendOptions): Promise<StoreInfoReport> {
  const tls = await readEtcdTls(options);
  const keys = new EtcdKeyspace(options.prefix);
  const client = new EtcdClient({ endpoints: options.endpoints, tls });
  const maintenance = new EtcdMaintenance({ endpoints: options.endpoints, tls });
  try {
    const header = await client.call<{ header?: { revision?: string } }>("/v3/kv/range", {
      key: toBase64(keys.base),
      count_only: true,
    });
    const revision = Number(header.header?.revision ?? 0);
    const compactedRevision = await etcdCompactedRevision(client, keys);
    const stats = await maintenance.stats({ revision, compactedRevision });
    return { source: "etcd", prefix: keys.prefix, info: { stats, quota: { bytes: 0, reached: false }, warnings: [] } };
  } finally {
    await maintenance.close();
    await client.close();
  }
}
