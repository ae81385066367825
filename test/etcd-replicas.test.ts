// Three platform replicas on a real 3-member etcd (Debian's etcd-server), started together on an empty prefix:
// one admin, one signing key, one default project; writes through one are seen by reads and watches on the others;
// one kubeconfig works against every replica; the controllers run on the elected leader and move when it is killed.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureServingCertificates } from "../src/pki/tls.ts";
import { EtcdClient, fromBase64, toBase64 } from "../src/storage/etcd/etcd-client.ts";
import { EtcdKeyspace } from "../src/storage/etcd/etcd-keyspace.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const PREFIX = "/replicas-test";
const keys = new EtcdKeyspace(PREFIX);

/** Keys under a store prefix, read straight from etcd. */
async function etcdKeys(client: EtcdClient, storePrefix: string): Promise<string[]> {
  const range = keys.range(storePrefix);
  const answer = await client.call<{ kvs?: { key: string }[] }>("/v3/kv/range", {
    key: toBase64(range.key),
    range_end: toBase64(range.end),
    keys_only: true,
  });
  return (answer.kvs ?? []).map((kv) => fromBase64(kv.key));
}

async function leaderRecord(client: EtcdClient): Promise<string | undefined> {
  const answer = await client.call<{ kvs?: { value: string }[] }>("/v3/kv/range", {
    key: toBase64(keys.leader("controllers")),
  });
  return answer.kvs?.[0] ? fromBase64(answer.kvs[0].value) : undefined;
}

describe("platform replicas on a 3-member etcd", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  let root: string;
  let client: EtcdClient;
  let replicas: PlatformProcess[] = [];
  let adminKey = "";

  before(async () => {
    cluster = await startEtcdCluster({ members: 3 });
    client = new EtcdClient({ endpoints: cluster.endpoints });
    root = await mkdtemp(join(tmpdir(), "replicas-"));
    // The shared serving identity: one CA and serving certificate (pki/) and one encryption key for every replica.
    const keyFile = join(root, "encryption.key");
    await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const dirs = ["a", "b", "c"].map((name) => join(root, name));
    await mkdir(dirs[0], { mode: 0o700 });
    await ensureServingCertificates({ dataDir: dirs[0], hosts: ["127.0.0.1"] });
    for (const dir of dirs.slice(1)) {
      await mkdir(dir, { mode: 0o700 });
      await cp(join(dirs[0], "pki"), join(dir, "pki"), { recursive: true });
    }
    const args = [
      "--store",
      "etcd",
      "--etcd-endpoints",
      cluster.endpoints.join(","),
      "--etcd-prefix",
      PREFIX,
      "--encryption-key-file",
      keyFile,
    ];
    replicas = await Promise.all(dirs.map((dataDir) => startPlatformProcess({ dataDir, extraArgs: args })));
    adminKey = replicas.map((r) => r.adminKey).find(Boolean) ?? "";
  });

  after(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await client?.close();
    await cluster?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("replicas started together on an empty etcd create one admin, one signing key and one default project", async () => {
    assert.equal(replicas.filter((replica) => replica.adminKey !== "").length, 1, "one replica made the admin key");
    assert.equal(replicas.filter((replica) => /Created user "admin"/.test(replica.stdout())).length, 1);
    assert.deepEqual(await etcdKeys(client, "/management.platform.sh/users/"), [
      `${PREFIX}/registry/management.platform.sh/users//admin`,
    ]);
    assert.equal((await etcdKeys(client, "/internal/signingkeys/")).length, 1, "one signing key");
    assert.equal((await etcdKeys(client, "/management.platform.sh/projects/")).length, 1, "one default project");
    // The admin key works on every replica, and tokens signed by one verify on the others.
    for (const replica of replicas) {
      const http = new AuthClient(replica.url, replica.caPem);
      const reply = await http.send("GET", `${API}/users/admin`, { token: adminKey });
      assert.equal(reply.status, 200, reply.body);
      http.agent.destroy();
    }
  });

  it("a write through one replica is seen by reads and watches on the others, in order, with optimistic concurrency", async () => {
    const [a, b, c] = replicas.map((replica) => new AuthClient(replica.url, replica.caPem));
    try {
      const list = await c.send("GET", `${API}/teams`, { token: adminKey });
      const from = list.json().metadata.resourceVersion;
      const watched = c.watch(`${API}/teams?watch=1&resourceVersion=${from}`, adminKey, 21);
      const written: string[] = [];
      for (let i = 0; i < 10; i++) {
        const name = `team-${i}`;
        const created = await (i % 2 ? a : b).send("POST", `${API}/teams`, {
          token: adminKey,
          body: { apiVersion: "management.platform.sh/v1", kind: "Team", metadata: { name }, spec: {} },
        });
        assert.equal(created.status, 201, created.body);
        written.push(created.json().metadata.resourceVersion);
        // Read-your-write on another replica: the object is there at once.
        const read = await (i % 2 ? b : a).send("GET", `${API}/teams/${name}`, { token: adminKey });
        assert.equal(read.status, 200, read.body);
        assert.equal(read.json().metadata.resourceVersion, written[i]);
      }
      // Optimistic concurrency across replicas: an update with a resourceVersion another replica superseded fails.
      const stale = (await a.send("GET", `${API}/teams/team-0`, { token: adminKey })).json();
      const newer = await b.send("PUT", `${API}/teams/team-0`, {
        token: adminKey,
        body: { ...stale, spec: { displayName: "from b" } },
      });
      assert.equal(newer.status, 200, newer.body);
      const conflict = await c.send("PUT", `${API}/teams/team-0`, {
        token: adminKey,
        body: { ...stale, spec: { displayName: "from c" } },
      });
      assert.equal(conflict.status, 409, conflict.body);
      for (let i = 0; i < 19; i++) {
        const deleted = await (i % 2 ? a : b).send("DELETE", `${API}/teams/team-${i % 10}`, { token: adminKey });
        if (i >= 10) assert.equal(deleted.status, 404);
      }
      const seen = (await watched).map((line) => JSON.parse(line));
      assert.equal(seen.length, 21, "10 ADDED, 1 MODIFIED, 10 DELETED, each once");
      const revisions = seen.map((event) => Number(event.object.metadata.resourceVersion));
      assert.deepEqual(
        revisions,
        [...revisions].sort((x, y) => x - y),
        "in revision order",
      );
      assert.equal(new Set(revisions).size, revisions.length, "no event twice");
      assert.deepEqual(
        seen.slice(0, 10).map((event) => [event.type, event.object.metadata.resourceVersion]),
        written.map((rv) => ["ADDED", rv]),
      );
    } finally {
      for (const http of [a, b, c]) http.agent.destroy();
    }
  });

  it("one kubeconfig works against every replica", { skip: kubectlSkip }, async () => {
    const made = replicas.find((replica) => replica.adminKey !== "")!;
    for (const replica of replicas) {
      const kubectl = new Kubectl(made.kubeconfig);
      const out = await kubectl.ok(["--server", `${replica.url}/kubernetes/management`, "get", "users", "-o", "name"]);
      assert.equal(out.trim(), "user.management.platform.sh/admin");
    }
  });

  it("GET /platform/replicas on any replica lists every replica, the leader marked", async () => {
    let identity: string | undefined;
    await eventually(async () => {
      identity = await leaderRecord(client);
      return identity !== undefined;
    }, "a leader is elected");
    for (const replica of replicas) {
      const http = new AuthClient(replica.url, replica.caPem);
      try {
        await eventually(async () => {
          const list = (await http.send("GET", "/platform/replicas", { token: adminKey })).json();
          const leading = list.items.filter((item: { leading: boolean }) => item.leading);
          return list.items.length === 3 && leading.length === 1 && leading[0].identity === identity;
        }, `replica ${replica.url} lists three replicas, ${identity} leading`);
        const list = (await http.send("GET", "/platform/replicas", { token: adminKey })).json();
        assert.ok(list.servedBy.endsWith(`/${replica.child.pid}`), list.servedBy);
        assert.deepEqual(
          list.items.map((item: { store: string }) => item.store),
          ["etcd", "etcd", "etcd"],
        );
      } finally {
        http.close();
      }
    }
  });

  it("controllers run on the leader only; when it is killed another replica takes over and the others serve on", async () => {
    let identity: string | undefined;
    await eventually(async () => {
      identity = await leaderRecord(client);
      return identity !== undefined;
    }, "a leader is elected");
    const leader = replicas.find((replica) => identity?.endsWith(`/${replica.child.pid}`));
    assert.ok(leader, `the leader record ${identity} names a replica`);
    const others = replicas.filter((replica) => replica !== leader);
    const http = new AuthClient(others[0].url, others[0].caPem);
    try {
      const exited = new Promise((resolve) => leader.child.once("exit", resolve));
      leader.child.kill("SIGKILL");
      await exited;
      replicas = others;
      // Clients of the other replicas see nothing: reads and writes keep succeeding while leadership moves.
      const owner = await http.send("POST", `${API}/teams`, {
        token: adminKey,
        body: { apiVersion: "management.platform.sh/v1", kind: "Team", metadata: { name: "owner" }, spec: {} },
      });
      assert.equal(owner.status, 201, owner.body);
      const uid = owner.json().metadata.uid;
      const dependent = await http.send("POST", `${API}/teams`, {
        token: adminKey,
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "Team",
          metadata: {
            name: "dependent",
            ownerReferences: [{ apiVersion: "management.platform.sh/v1", kind: "Team", name: "owner", uid }],
          },
          spec: {},
        },
      });
      assert.equal(dependent.status, 201, dependent.body);
      await eventually(async () => {
        const now = await leaderRecord(client);
        return now !== undefined && now !== identity;
      }, "another replica leads");
      // The garbage collector now runs on the new leader: deleting the owner removes its dependent.
      assert.equal((await http.send("DELETE", `${API}/teams/owner`, { token: adminKey })).status, 200);
      await eventually(
        async () => (await http.send("GET", `${API}/teams/dependent`, { token: adminKey })).status === 404,
        "the new leader's garbage collector deletes the dependent",
      );
      for (const replica of others) {
        const reply = await new AuthClient(replica.url, replica.caPem).send("GET", `${API}/teams`, {
          token: adminKey,
        });
        assert.equal(reply.status, 200);
      }
    } finally {
      http.agent.destroy();
    }
  });
});
