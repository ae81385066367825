// Faults under a platform on a real 3-member etcd: the etcd leader killed (SIGKILL) under write load, and etcd's
// quorum lost and regained. (A killed platform replica and watches across replicas: etcd-replicas.test.ts.)

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const team = (name: string) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "Team",
  metadata: { name },
  spec: {},
});

describe("platform on etcd under faults", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  let root: string;
  let platform: PlatformProcess;
  let http: AuthClient;

  before(async () => {
    cluster = await startEtcdCluster({ members: 3 });
    root = await mkdtemp(join(tmpdir(), "etcd-faults-"));
    const keyFile = join(root, "encryption.key");
    await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    platform = await startPlatformProcess({
      extraArgs: ["--store", "etcd", "--etcd-endpoints", cluster.endpoints.join(","), "--encryption-key-file", keyFile],
    });
    http = new AuthClient(platform.url, platform.caPem);
  });

  after(async () => {
    http?.agent.destroy();
    await platform?.stop();
    await cluster?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("after kill -9 of the etcd leader under write load, writes resume and no acknowledged write is lost", async (t) => {
    const acknowledged: string[] = [];
    const failed: number[] = [];
    let killed = false;
    const writer = async (w: number) => {
      for (let i = 0; i < 40; i++) {
        const name = `load-${w}-${i}`;
        const reply = await http.send("POST", `${API}/teams`, { token: platform.adminKey, body: team(name) });
        if (reply.status === 201) acknowledged.push(name);
        else {
          failed.push(reply.status);
          t.diagnostic(`refused: ${reply.status} ${reply.body}`);
        }
        if (!killed && acknowledged.length >= 60) {
          killed = true;
          await (await cluster.leader()).kill();
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, (_, w) => writer(w)));
    assert.ok(killed, "the leader was killed mid-load");
    for (const status of failed) assert.equal(status, 503, "a write that fails says the store is unavailable");
    // Writes resumed after the election: the writers' last writes were acknowledged.
    for (let w = 0; w < 6; w++) assert.ok(acknowledged.includes(`load-${w}-39`), `writer ${w} finished`);
    const listed = await http.send("GET", `${API}/teams`, { token: platform.adminKey });
    const names = new Set(listed.json().items.map((item: { metadata: { name: string } }) => item.metadata.name));
    for (const name of acknowledged) assert.ok(names.has(name), `${name} was acknowledged and is stored`);
    t.diagnostic(`${acknowledged.length} writes acknowledged, ${failed.length} refused during the election`);
    for (const member of cluster.members) if (!member.running) await member.start();
  });

  it("with etcd's quorum lost writes fail fast with 503 naming etcd and /readyz fails; both recover with quorum", async (t) => {
    const [, second, third] = cluster.members;
    await second.kill();
    await third.kill();
    await eventually(async () => {
      const ready = await http.send("GET", "/readyz?verbose");
      return ready.status !== 200 && /etcd/.test(ready.body);
    }, "/readyz reports etcd");
    const started = Date.now();
    const refused = await http.send("POST", `${API}/teams`, { token: platform.adminKey, body: team("no-quorum") });
    t.diagnostic(`the write was refused after ${Date.now() - started} ms`);
    assert.equal(refused.status, 503, refused.body);
    assert.match(refused.json().message, /etcd/);
    await second.start();
    await third.start();
    await eventually(async () => (await http.send("GET", "/readyz")).status === 200, "/readyz recovers");
    const accepted = await http.send("POST", `${API}/teams`, { token: platform.adminKey, body: team("quorum-back") });
    assert.equal(accepted.status, 201, accepted.body);
  });
});
