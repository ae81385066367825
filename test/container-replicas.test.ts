// Two platform replicas in containers on a real etcd (Debian's etcd-server), each with its data directory on a volume
// of its own holding the shared serving identity and encryption key, as README "Run as containers" shows: a write
// through one is read through the other, `podman stop` (SIGTERM) of one under writes loses no acknowledged create,
// and a new container on its volume serves everything again.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureServingCertificates } from "../src/pki/tls.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { containersMissing, TestContainers, testImage } from "./support/containers.ts";
import { type StartedContainer, startPlatformContainer, stopContainer } from "./support/platform-container.ts";
import { createTeamsUntilStopped } from "./support/write-load.ts";

const IMAGE_UID = 65532;

/** Copies `from` into a volume's directory, all of it owned by the image's user (directories 0700, files 0600). */
function fillVolume(from: string, volumeDir: string): void {
  cpSync(from, volumeDir, { recursive: true });
  const own = (path: string) => {
    chownSync(path, IMAGE_UID, IMAGE_UID);
    if (statSync(path).isDirectory()) {
      chmodSync(path, 0o700);
      for (const entry of readdirSync(path)) own(join(path, entry));
    } else chmodSync(path, 0o600);
  };
  own(volumeDir);
}

const skip = containersMissing() || etcdMissing();

describe("two platform replicas in containers on etcd", { skip, timeout: 900_000 }, () => {
  const containers = new TestContainers();
  const seed = mkdtempSync(join(tmpdir(), "vc-replicas-seed-"));
  let etcd: EtcdCluster;
  let image: string;
  let volumes: string[];
  let dirs: string[];
  let args: string[];
  let replicas: StartedContainer[];
  let adminKey: string;
  let caPem: string;

  const clientOf = (replica: StartedContainer) => new AuthClient(replica.url, caPem);

  before(
    async () => {
      image = (await testImage()).ref;
      etcd = await startEtcdCluster({ members: 1 });
      // The shared serving identity and encryption key (on etcd it is never generated), in each replica's volume.
      await ensureServingCertificates({ dataDir: seed, hosts: ["127.0.0.1"] });
      writeFileSync(join(seed, "pki", "encryption.key"), `${randomBytes(32).toString("base64")}\n`);
      caPem = readFileSync(join(seed, "pki", "ca.crt"), "utf8");
      volumes = [await containers.volume("replica-a"), await containers.volume("replica-b")];
      dirs = await Promise.all(volumes.map((volume) => containers.volumePath(volume)));
      for (const dir of dirs) fillVolume(seed, dir);
      const prefix = `/containers-${randomBytes(4).toString("hex")}`;
      args = ["--store", "etcd", "--etcd-endpoints", etcd.endpoints.join(","), "--etcd-prefix", prefix];
      replicas = await Promise.all(volumes.map((volume) => startPlatformContainer(containers, image, volume, args)));
      const withKey = dirs.filter((dir) => existsSync(join(dir, "admin-access-key")));
      assert.equal(withKey.length, 1, "one admin, made by one replica");
      adminKey = readFileSync(join(withKey[0], "admin-access-key"), "utf8").trim();
    },
    { timeout: 900_000 },
  );

  after(async () => {
    await containers.removeAll();
    await etcd?.stop();
    rmSync(seed, { recursive: true, force: true });
  });

  it("a write through one replica is read through the other", async () => {
    const [a, b] = replicas.map(clientOf);
    const created = await a.send("POST", `${API}/teams`, { token: adminKey, body: { metadata: { name: "via-a" } } });
    assert.equal(created.status, 201, created.body);
    const read = await b.send("GET", `${API}/teams/via-a`, { token: adminKey });
    assert.equal(read.status, 200, read.body);
    a.agent.destroy();
    b.agent.destroy();
  });

  it("SIGTERM to one under writes loses no acknowledged create; a new container on its volume serves them all", async () => {
    const a = clientOf(replicas[0]);
    const load = createTeamsUntilStopped(a, adminKey, "replica-stop");
    await load.reached(20);
    assert.equal(await stopContainer(containers, replicas[0].name), 0, "a graceful stop");
    await load.done;
    a.agent.destroy();
    const b = clientOf(replicas[1]);
    const names = async (client: AuthClient) =>
      new Set(
        (await client.send("GET", `${API}/teams`, { token: adminKey }))
          .json()
          .items.map((team: { metadata: { name: string } }) => team.metadata.name),
      );
    const seen = await names(b);
    const lost = load.acknowledged.filter((name) => !seen.has(name));
    assert.deepEqual(lost, [], `read through the other replica: ${lost.length} of ${load.acknowledged.length} lost`);
    b.agent.destroy();

    replicas[0] = await startPlatformContainer(containers, image, volumes[0], args);
    const again = clientOf(replicas[0]);
    const stored = await names(again);
    again.agent.destroy();
    assert.deepEqual(
      load.acknowledged.filter((name) => !stored.has(name)),
      [],
      "read through the restarted replica",
    );
  });
});
