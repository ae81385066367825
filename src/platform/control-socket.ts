// The running platform's local control socket, `<data-dir>/platform.sock`: HTTP over a Unix socket that answers
// `GET /v1/snapshot` with a consistent snapshot of the store, for `virtualcluster platform backup`, and
// `GET /v1/store-info` with the store's size and housekeeping (JSON), for `virtualcluster platform store-info`. The store keeps
// its database file locked while it serves, so a snapshot has to come from this process. Only who may enter the
// 0700 data directory (who could read the database itself) can connect; nothing is served on the network, and the
// platform writes no file a caller names: the snapshot goes to a private temporary file, then down the socket.

import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, open, readdir, rm, stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import { type KeyValueStore, StorageError } from "../storage/types.ts";
import { http } from "../utils/node-http.ts";
import { CONTROL_SOCKET_FILE } from "./store-files.ts";
import type { StoreInfo } from "./store-monitor.ts";

export const SNAPSHOT_PATH = "/v1/snapshot";
export const STORE_INFO_PATH = "/v1/store-info";
/** Unix socket paths longer than this do not fit sockaddr_un on every system. */
const MAX_SOCKET_PATH = 100;
const TEMP_PREFIX = ".snapshot-";

export interface ControlSocketOptions {
  dataDir: string;
  storage: KeyValueStore;
  /** What GET /v1/store-info answers. */
  storeInfo?(): StoreInfo;
  logger?: Logger;
}

export interface ControlSocket {
  path: string;
  close(): Promise<void>;
}

/**
 * Listens on the data directory's control socket. The caller holds the store (and its lock), so a socket file or
 * snapshot left there by a killed process is stale and removed. Resolves to undefined, with a warning, when the
 * socket cannot be made: the platform serves on, and `platform backup` then needs it stopped.
 */
export async function startControlSocket(options: ControlSocketOptions): Promise<ControlSocket | undefined> {
  const path = join(options.dataDir, CONTROL_SOCKET_FILE);
  await removeLeftovers(options.dataDir);
  if (path.length > MAX_SOCKET_PATH) {
    options.logger?.warn({ path }, "control socket path too long: online backup is off (back up a stopped platform)");
    return undefined;
  }
  await rm(path, { force: true });
  const server = http.createServer((request, response) => {
    if (request.method === "GET" && request.url === SNAPSHOT_PATH) {
      serveSnapshot(options, response).catch((error: unknown) => {
        options.logger?.error({ err: String(error) }, "snapshot for backup failed");
        if (!response.headersSent) fail(response, error);
        else response.destroy();
      });
      return;
    }
    if (request.method === "GET" && request.url === STORE_INFO_PATH && options.storeInfo) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(options.storeInfo()));
      return;
    }
    response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ message: "not found" }));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    await chmod(path, 0o600);
  } catch (error) {
    server.close();
    options.logger?.warn({ path, err: String(error) }, "control socket unavailable: online backup is off");
    return undefined;
  }
  return {
    path,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(path, { force: true });
    },
  };
}

/** True when a platform listens on the data directory's control socket (a socket file alone may be stale). */
export function controlSocketAnswers(dataDir: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(join(dataDir, CONTROL_SOCKET_FILE));
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function serveSnapshot(options: ControlSocketOptions, response: ServerResponse): Promise<void> {
  if (!options.storage.snapshot) throw new Error("this store cannot take snapshots");
  const file = join(options.dataDir, `${TEMP_PREFIX}${randomUUID()}.db`);
  try {
    await (await open(file, "wx", 0o600)).close();
    await options.storage.snapshot(file);
    const { size } = await stat(file);
    response.writeHead(200, { "content-type": "application/vnd.sqlite3", "content-length": String(size) });
    await new Promise<void>((resolve, reject) => {
      const stream = createReadStream(file);
      stream.once("error", reject);
      response.once("close", () => resolve());
      stream.pipe(response);
    });
  } finally {
    await rm(file, { force: true });
  }
}

function fail(response: ServerResponse, error: unknown): void {
  const noSpace = error instanceof StorageError && error.storageCode === "NoSpace";
  const message = error instanceof Error ? error.message : String(error);
  response
    .writeHead(noSpace ? 507 : 500, { "content-type": "application/json" })
    .end(JSON.stringify({ message: `the platform could not take a snapshot: ${message}` }));
}

/** Snapshots a killed platform was still writing. */
async function removeLeftovers(dataDir: string): Promise<void> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  await Promise.all(
    names.filter((name) => name.startsWith(TEMP_PREFIX)).map((name) => rm(join(dataDir, name), { force: true })),
  );
}
