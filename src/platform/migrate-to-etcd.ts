// `virtualcluster platform migrate --from-data-dir DIR --to-etcd URL[,URL...]`: copies a stopped SQLite platform's
// store into etcd, every key with its newest value as stored (secret values stay sealed, so the data directory's
// pki/encryption.key opens them on etcd too, and every access key, password and signing key keeps working). The
// objects get new resourceVersions (etcd's revisions); history is not copied. A prefix that already holds keys is
// refused unless `force`, which deletes them first.

import { join } from "node:path";
import { EtcdClient, toBase64 } from "../storage/etcd/etcd-client.ts";
import { EtcdKeyspace } from "../storage/etcd/etcd-keyspace.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { StoredRecord } from "../storage/types.ts";
import { type EtcdBackendOptions, openEtcdBackend, readEtcdTls } from "./etcd-backend.ts";
import { STORE_FILE } from "./store-files.ts";

export interface MigrateOptions {
  fromDataDir: string;
  to: EtcdBackendOptions;
  /** Replace whatever the etcd prefix holds. */
  force?: boolean;
  /** Keys copied at once (default 32). */
  concurrency?: number;
}

export interface MigrateResult {
  keys: number;
  /** The SQLite store's revision that was copied. */
  fromRevision: number;
  /** Keys deleted from the etcd prefix first (with force). */
  replaced: number;
  prefix: string;
}

export class MigrationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationRefused";
  }
}

export async function migrateToEtcd(options: MigrateOptions): Promise<MigrateResult> {
  const file = join(options.fromDataDir, STORE_FILE);
  // Opening fails while a platform serves the file (it holds the lock): migrate a stopped platform.
  const source = await openSqliteStore({ path: file }).catch((error: unknown) => {
    throw new MigrationRefused(`cannot open ${file}: ${(error as Error).message}`);
  });
  try {
    const keyspace = new EtcdKeyspace(options.to.prefix);
    const replaced = await clearPrefix(options.to, keyspace, options.force === true);
    const target = await openEtcdBackend(options.to);
    try {
      const { records, revision } = await source.list({ prefix: "/" });
      await copyAll(records, (record) => target.create(record.key, record.value), options.concurrency ?? 32);
      return { keys: records.length, fromRevision: revision, replaced, prefix: keyspace.prefix };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Refuses a prefix that holds keys (or, with force, deletes them); answers how many were deleted. */
async function clearPrefix(to: EtcdBackendOptions, keyspace: EtcdKeyspace, force: boolean): Promise<number> {
  const client = new EtcdClient({ endpoints: to.endpoints, tls: await readEtcdTls(to) });
  try {
    const range = keyspace.all();
    const counted = await client.call<{ count?: string }>("/v3/kv/range", {
      key: toBase64(range.key),
      range_end: toBase64(range.end),
      count_only: true,
    });
    const count = Number(counted.count ?? 0);
    if (count > 0 && !force) {
      throw new MigrationRefused(
        `the etcd prefix ${keyspace.prefix} already holds ${count} keys (a platform runs there, or a migration ` +
          "was made before): choose another --etcd-prefix, or pass --force to delete them and copy again",
      );
    }
    await client.call("/v3/kv/deleterange", { key: toBase64(range.key), range_end: toBase64(range.end) });
    return count;
  } finally {
    await client.close();
  }
}

async function copyAll(
  records: StoredRecord[],
  write: (record: StoredRecord) => Promise<unknown>,
  concurrency: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < records.length) await write(records[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
}
