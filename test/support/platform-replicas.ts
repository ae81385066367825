// Replicas of the platform on one etcd, as production runs them: one encryption key file, one serving certificate
// (copied to each data directory), every process started together on an empty prefix.

import { randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureServingCertificates } from "../../src/pki/tls.ts";
import { type EtcdCluster, startEtcdCluster } from "../../src/storage/etcd/testing-etcd-cluster.ts";
import { type PlatformProcess, startPlatformProcess } from "./platform-process.ts";

export interface PlatformReplicas {
  replicas: PlatformProcess[];
  /** The bootstrap admin's key (only the replica that made the admin has its file). */
  adminKey: string;
  cluster: EtcdCluster;
  stop(): Promise<void>;
}

export async function startPlatformReplicas(options: {
  replicas: number;
  members?: number;
}): Promise<PlatformReplicas> {
  const cluster = await startEtcdCluster({ members: options.members ?? 1 });
  const root = await mkdtemp(join(tmpdir(), "platform-replicas-"));
  const keyFile = join(root, "encryption.key");
  await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  const dirs = Array.from({ length: options.replicas }, (_, i) => join(root, `replica-${i}`));
  await mkdir(dirs[0], { mode: 0o700 });
  await ensureServingCertificates({ dataDir: dirs[0], hosts: ["127.0.0.1"] });
  for (const dir of dirs.slice(1)) {
    await mkdir(dir, { mode: 0o700 });
    await cp(join(dirs[0], "pki"), join(dir, "pki"), { recursive: true });
  }
  const args = ["--store", "etcd", "--etcd-endpoints", cluster.endpoints.join(","), "--encryption-key-file", keyFile];
  const replicas = await Promise.all(dirs.map((dataDir) => startPlatformProcess({ dataDir, extraArgs: args })));
  return {
    replicas,
    adminKey: replicas.find((replica) => replica.adminKey)?.adminKey ?? "",
    cluster,
    async stop() {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await cluster.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}
