// The server rules a console for every user stands on, on the real platform over HTTPS with kubectl. Projects are
// listed as "the projects you can see" (OpenShift's rule): every user lists and watches projects, and sees only
// those it may read (as owner, member, directly or through a team); admins and viewers see them all; a watcher gets
// a project ADDED when it becomes a member and DELETED when it stops being one; reading another project by name
// stays forbidden. An access key needs a display name (422 without one), and reads say when a key expires, Login
// keys included.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const V1 = "management.platform.sh/v1";
const project = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: V1,
  kind: "Project",
  metadata: { name },
  spec,
});

describe("what a member may list, and keys that say what they are", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let kubectl: Kubectl;
  const keys: Record<string, string> = {};
  const adminPassword = async () => (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
  const names = async (user: string) =>
    (await kubectl.ok(["--token", keys[user], "get", "projects", "-o", "name"])).trim().split("\n").filter(Boolean);

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    kubectl = new Kubectl(platform.kubeconfig);
    const admin = platform.adminKey;
    for (const user of ["mia", "oz", "tom", "val", "nina"]) {
      await client.createUser(admin, user, user === "val" ? { clusterRoles: [{ name: "viewer" }] } : {});
      keys[user] = await client.createKey(admin, `key-${user}`, { user });
    }
    await client.createTeam(admin, "ops", { users: ["tom"] });
    for (const [name, spec] of [
      ["alpha", { members: [{ kind: "User", name: "mia", clusterRole: "view" }] }],
      ["beta", { owner: { user: "oz" } }],
      ["gamma", { members: [{ kind: "Team", name: "ops", clusterRole: "edit" }] }],
    ] as const) {
      const created = await client.send("POST", `${API}/projects`, { token: admin, body: project(name, spec) });
      assert.equal(created.status, 201, created.body);
    }
  });
  after(async () => {
    client?.close();
    await platform?.stop();
  });

  it("kubectl get projects shows a member, an owner and a team member only their projects", async () => {
    assert.deepEqual(await names("mia"), ["project.management.platform.sh/alpha"]);
    assert.deepEqual(await names("oz"), ["project.management.platform.sh/beta"]);
    assert.deepEqual(await names("tom"), ["project.management.platform.sh/gamma"]);
    const table = await kubectl.ok(["--token", keys.mia, "get", "projects"]);
    assert.match(table, /^alpha\s/m);
    assert.doesNotMatch(table, /default|beta|gamma/);
  });

  it("a user with no role lists no project (an empty list, not 403); viewers and admins list all", async () => {
    const none = await kubectl.run(["--token", keys.nina, "get", "projects"]);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stderr, /No resources found/);
    const all = ["alpha", "beta", "default", "gamma"].map((n) => `project.management.platform.sh/${n}`);
    assert.deepEqual(await names("val"), all);
    assert.deepEqual((await kubectl.ok(["get", "projects", "-o", "name"])).trim().split("\n"), all);
  });

  it("kubectl auth can-i says every user may list projects; reading another one stays forbidden", async () => {
    const can = async (user: string, ...args: string[]) =>
      (await kubectl.run(["--token", keys[user], "auth", "can-i", ...args])).stdout.trim();
    assert.equal(await can("nina", "list", "projects.management.platform.sh"), "yes");
    assert.equal(await can("mia", "get", "projects.management.platform.sh/alpha"), "yes");
    assert.equal(await can("mia", "get", "projects.management.platform.sh/beta"), "no");
    const other = await kubectl.run(["--token", keys.mia, "get", "project", "beta"]);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /forbidden/i);
    const rows = await kubectl.ok(["--token", keys.mia, "auth", "can-i", "--list"]);
    assert.match(rows, /^projects\.management\.platform\.sh\s+\[\]\s+\[\]\s+\[list watch\]/m);
    assert.match(rows, /^projects\.management\.platform\.sh\s+\[\]\s+\[alpha\]\s+\[get\]/m);
  });

  it("paging stays exact: a member's pages hold only its projects", async () => {
    const first = await client.send("GET", `${API}/projects?limit=1`, { token: keys.oz });
    assert.equal(first.status, 200, first.body);
    assert.deepEqual(
      first.json().items.map((p: { metadata: { name: string } }) => p.metadata.name),
      ["beta"],
    );
  });

  it("a watch shows a project when the user becomes a member and deletes it when he stops being one", async () => {
    const list = await client.send("GET", `${API}/projects`, { token: keys.nina });
    assert.deepEqual(list.json().items, []);
    const events = client.watch(
      `${API}/projects?watch=1&resourceVersion=${list.json().metadata.resourceVersion}`,
      keys.nina,
      2,
    );
    const admin = platform.adminKey;
    const patch = (members: unknown[]) =>
      client.send("PATCH", `${API}/projects/beta`, {
        token: admin,
        body: { spec: { members } },
        contentType: "application/merge-patch+json",
      });
    assert.equal((await patch([{ kind: "User", name: "nina", clusterRole: "view" }])).status, 200);
    // A change elsewhere that she may not see sends her nothing.
    const other = await client.send("PATCH", `${API}/projects/alpha`, {
      token: admin,
      body: { spec: { displayName: "Alpha" } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(other.status, 200, other.body);
    assert.equal((await patch([])).status, 200);
    const seen = (await events).map(
      (line) => JSON.parse(line) as { type: string; object: { metadata: { name: string } } },
    );
    assert.deepEqual(
      seen.map((e) => `${e.type} ${e.object.metadata.name}`),
      ["ADDED beta", "DELETED beta"],
    );
  });

  it("every user lists and watches instances across namespaces and sees those of his projects only", async () => {
    const admin = platform.adminKey;
    const instance = (namespace: string, name: string) =>
      client.send("POST", `${API}/namespaces/${namespace}/virtualclusterinstances`, {
        token: admin,
        body: { apiVersion: V1, kind: "VirtualClusterInstance", metadata: { name }, spec: {} },
      });
    assert.equal((await instance("p-alpha", "a1")).status, 201);
    assert.equal((await instance("p-beta", "b1")).status, 201);
    const all = async (user: string) =>
      (await kubectl.ok(["--token", keys[user], "get", "virtualclusterinstances", "-A", "-o", "name"])).trim();
    assert.equal(await all("mia"), "virtualclusterinstance.management.platform.sh/a1");
    assert.equal(await all("oz"), "virtualclusterinstance.management.platform.sh/b1");
    assert.equal(await all("nina"), "");
    assert.equal(
      (await kubectl.ok(["get", "virtualclusterinstances", "-A", "-o", "name"])).trim().split("\n").length,
      2,
    );
    const sideways = await kubectl.run(["--token", keys.mia, "get", "virtualclusterinstances", "-n", "p-beta"]);
    assert.notEqual(sideways.code, 0, "another project's namespace stays forbidden");
    assert.match(sideways.stderr, /user "mia" is not a member of project "beta"/);

    const list = await client.send("GET", `${API}/virtualclusterinstances`, { token: keys.mia });
    const events = client.watch(
      `${API}/virtualclusterinstances?watch=1&resourceVersion=${list.json().metadata.resourceVersion}`,
      keys.mia,
      1,
    );
    assert.equal((await instance("p-beta", "b2")).status, 201, "not hers: not sent");
    assert.equal((await instance("p-alpha", "a2")).status, 201);
    const [first] = (await events).map(
      (line) => JSON.parse(line) as { type: string; object: { metadata: { name: string } } },
    );
    assert.equal(`${first.type} ${first.object.metadata.name}`, "ADDED a2");
  });

  it("kubectl create of an access key without a display name is refused with 422 and stores nothing", async () => {
    const manifest = (displayName?: string) =>
      JSON.stringify({
        apiVersion: V1,
        kind: "OwnedAccessKey",
        metadata: { name: "unnamed" },
        spec: { type: "User", ...(displayName === undefined ? {} : { displayName }) },
      });
    for (const displayName of [undefined, " "]) {
      const refused = await kubectl.run(["--token", keys.mia, "create", "-f", "-"], manifest(displayName));
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /is invalid: spec\.displayName: Required value/);
    }
    const missing = await kubectl.run(["--token", keys.mia, "get", "ownedaccesskey", "unnamed"]);
    assert.match(missing.stderr, /NotFound|not found/);
    const created = await kubectl.run(["--token", keys.mia, "create", "-f", "-"], manifest("laptop"));
    assert.equal(created.code, 0, created.stderr);
  });

  it("reads give every key its expiry: a Login key ends with loginAccessKeyTTLSeconds (20 days by default)", async () => {
    const login = await client.send("POST", "/auth/password/login", {
      body: { username: "admin", password: await adminPassword() },
    });
    assert.equal(login.status, 200, login.body);
    const keys = JSON.parse(
      await kubectl.ok(["get", "ownedaccesskeys", "--field-selector", "spec.type=Login", "-o", "json"]),
    );
    const key = keys.items[0];
    const created = Date.parse(key.metadata.creationTimestamp);
    assert.equal(Date.parse(key.status.expirationTimestamp) - created, 20 * 86_400_000);
  });

  it("kubectl get --raw /platform/replicas shows admins and viewers the running replica; others get 403", async () => {
    const list = JSON.parse(await kubectl.ok(["get", "--raw", "/platform/replicas"]));
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0].identity, list.servedBy);
    assert.equal(list.items[0].store, process.env.VCP_TEST_STORE === "etcd" ? "etcd" : "sqlite");
    assert.equal(list.items[0].leading, true);
    assert.equal(
      JSON.parse(await kubectl.ok(["--token", keys.val, "get", "--raw", "/platform/replicas"])).items.length,
      1,
    );
    const refused = await kubectl.run(["--token", keys.mia, "get", "--raw", "/platform/replicas"]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /forbidden/i);
  });
});
