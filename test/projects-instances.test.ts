// Projects and virtual cluster instances on the real platform over HTTPS: the default project, kubectl tables and
// writes, membership (a non-member cannot create instances, roles limit members), the project namespace rule, the
// status subresource, deletion of a project held while instances remain, and restarts.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const V1 = "management.platform.sh/v1";
const instancesOf = (namespace: string) => `${API}/namespaces/${namespace}/virtualclusterinstances`;
const instance = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: V1,
  kind: "VirtualClusterInstance",
  metadata: { name },
  spec,
});

describe("projects and virtual cluster instances", () => {
  let dataDir: string;
  let platform: PlatformProcess;
  let client: AuthClient;
  let kubectl: Kubectl;
  let admin: string;
  const keys: Record<string, string> = {};

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-projects-"));
    platform = await startPlatformProcess({ dataDir });
    client = new AuthClient(platform.url, platform.caPem);
    kubectl = new Kubectl(platform.kubeconfig);
    admin = platform.adminKey;
    for (const user of ["ann", "ed", "viv", "tess", "nobody"]) {
      await client.createUser(admin, user);
      keys[user] = await client.createKey(admin, `key-${user}`, { user });
    }
    const team = await client.send("POST", `${API}/teams`, {
      token: admin,
      body: { apiVersion: V1, kind: "Team", metadata: { name: "testers" }, spec: { users: ["tess"] } },
    });
    assert.equal(team.status, 201, team.body);
    const project = await client.send("POST", `${API}/projects`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "Project",
        metadata: { name: "team-a" },
        spec: {
          displayName: "Team A",
          owner: { user: "ann" },
          members: [
            { kind: "User", name: "ed", clusterRole: "edit" },
            { kind: "User", name: "viv", clusterRole: "view" },
            { kind: "Team", name: "testers", clusterRole: "edit" },
          ],
        },
      },
    });
    assert.equal(project.status, 201, project.body);
  });
  after(async () => {
    client?.close();
    await platform?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("the first start creates the project default, and kubectl shows projects with their namespace", {
    skip: kubectlSkip,
  }, async () => {
    const table = await kubectl.ok(["get", "projects"]);
    assert.match(table, /^NAME\s+DISPLAY NAME\s+OWNER\s+MEMBERS\s+NAMESPACE\s+PHASE\s+AGE$/m);
    assert.match(table, /^default\s+Default Project\s+0\s+p-default\s+Active\s/m);
    assert.match(table, /^team-a\s+Team A\s+ann\s+3\s+p-team-a\s+Active\s/m);
    const created = await kubectl.ok(
      ["create", "-f", "-"],
      `apiVersion: ${V1}\nkind: Project\nmetadata: {name: from-kubectl}\nspec: {displayName: By kubectl}\n`,
    );
    assert.match(created, /project.management.platform.sh\/from-kubectl created/);
  });

  it("kubectl creates instances in a project namespace and lists them across namespaces", {
    skip: kubectlSkip,
  }, async () => {
    const applied = await kubectl.ok(
      ["apply", "-f", "-"],
      `apiVersion: ${V1}\nkind: VirtualClusterInstance\nmetadata: {name: listed, namespace: p-default}\nspec: {external: true}\n`,
    );
    assert.match(applied, /virtualclusterinstance.management.platform.sh\/listed created/);
    const table = await kubectl.ok(["get", "vci", "-A"]);
    assert.match(table, /^NAMESPACE\s+NAME\s+PROJECT\s+PHASE\s+ONLINE\s+HEARTBEAT\s+EXTERNAL\s+AGE$/m);
    assert.match(table, /^p-default\s+listed\s+default\s+Pending\s+false\s+<unknown>\s+true\s/m);
    const wrong = await kubectl.run(
      ["create", "-f", "-"],
      `apiVersion: ${V1}\nkind: VirtualClusterInstance\nmetadata: {name: stray, namespace: p-missing}\nspec: {}\n`,
    );
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /project "missing" does not exist/);
  });

  it("a non-member cannot create instances in a project: 403 saying so", async () => {
    const reply = await client.send("POST", instancesOf("p-team-a"), {
      token: keys.nobody,
      body: instance("intruder"),
    });
    assert.equal(reply.status, 403, reply.body);
    assert.equal(
      reply.json().message,
      'virtualclusterinstances.management.platform.sh is forbidden: User "nobody" cannot create resource "virtualclusterinstances" in API group "management.platform.sh" in the namespace "p-team-a": user "nobody" is not a member of project "team-a"',
    );
    const list = await client.send("GET", instancesOf("p-team-a"), { token: keys.nobody });
    assert.equal(list.status, 403);
  });

  it("members act by role: edit (directly or through a team) and the owner write, view reads", async () => {
    for (const [who, name] of [
      ["ed", "by-ed"],
      ["tess", "by-tess"],
      ["ann", "by-ann"],
    ]) {
      const reply = await client.send("POST", instancesOf("p-team-a"), { token: keys[who], body: instance(name) });
      assert.equal(reply.status, 201, `${who}: ${reply.body}`);
    }
    const denied = await client.send("POST", instancesOf("p-team-a"), { token: keys.viv, body: instance("by-viv") });
    assert.equal(denied.status, 403);
    assert.match(denied.json().message, /user "viv" has the role "view" in project "team-a", which does not allow it/);
    const listed = await client.send("GET", instancesOf("p-team-a"), { token: keys.viv });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed
        .json()
        .items.map((i: { metadata: { name: string } }) => i.metadata.name)
        .sort(),
      ["by-ann", "by-ed", "by-tess"],
    );
    const project = await client.send("GET", `${API}/projects/team-a`, { token: keys.viv });
    assert.equal(project.status, 200);
    const deleted = await client.send("DELETE", `${instancesOf("p-team-a")}/by-tess`, { token: keys.ed });
    assert.equal(deleted.status, 200, deleted.body);
    // A member of team-a is nobody in default.
    const elsewhere = await client.send("POST", instancesOf("p-default"), { token: keys.ed, body: instance("x") });
    assert.equal(elsewhere.status, 403);
  });

  it("a key scoped to another project cannot use this one", async () => {
    const scoped = await client.createKey(admin, "ed-other-project", {
      user: "ed",
      scope: { projects: [{ project: "default" }] },
    });
    const reply = await client.send("POST", instancesOf("p-team-a"), { token: scoped, body: instance("scoped") });
    assert.equal(reply.status, 403);
    assert.match(reply.json().message, /the access key's scope does not allow it/);
  });

  it("status: the virtual cluster reports its state through /status; the client CA stays the platform's", async () => {
    const created = await client.send("POST", instancesOf("p-default"), {
      token: admin,
      body: instance("reporting", { external: true }),
    });
    assert.equal(created.status, 201, created.body);
    const ca = created.json().status.clientCertificateAuthority as string;
    assert.match(ca, /^-----BEGIN CERTIFICATE-----/);
    const vcKey = await client.createKey(admin, "vc-connect", {
      user: "admin",
      scope: { roles: [{ role: "virtualcluster", projects: ["*"] }] },
    });
    const status = {
      phase: "Ready",
      online: true,
      kubernetesVersion: "v1.32.4",
      lastHeartbeatTime: "2026-01-02T03:04:05Z",
      serverCertificateAuthority: "-----BEGIN CERTIFICATE-----\nserving\n-----END CERTIFICATE-----\n",
      clientCertificateAuthority: "forged",
    };
    const patched = await client.send("PATCH", `${instancesOf("p-default")}/reporting/status`, {
      token: vcKey,
      body: { status },
      contentType: "application/merge-patch+json",
    });
    assert.equal(patched.status, 200, patched.body);
    assert.deepEqual(patched.json().status, { ...status, clientCertificateAuthority: ca });
    // Status written through the main resource is ignored.
    const main = await client.send("PATCH", `${instancesOf("p-default")}/reporting`, {
      token: admin,
      body: { status: { phase: "Failed" }, spec: { displayName: "Reporting" } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(main.json().status.phase, "Ready");
    // The virtual cluster's key may register an instance (a virtual cluster registers itself) but not delete one.
    const create = await client.send("POST", instancesOf("p-default"), { token: vcKey, body: instance("self") });
    assert.equal(create.status, 201, create.body);
    const removal = await client.send("DELETE", `${instancesOf("p-default")}/self`, { token: vcKey });
    assert.equal(removal.status, 403);
    await client.send("DELETE", `${instancesOf("p-default")}/self`, { token: admin });
  });

  it("deleting a project with instances is held and says why; it completes once they are gone", async () => {
    for (const name of ["one", "two"]) {
      const reply = await client.send("POST", instancesOf("p-team-a"), { token: admin, body: instance(name) });
      assert.equal(reply.status, 201, reply.body);
    }
    const deleting = await client.send("DELETE", `${API}/projects/team-a`, { token: admin });
    assert.equal(deleting.status, 200, deleting.body);
    assert.ok(deleting.json().metadata.deletionTimestamp);
    assert.match(
      String(deleting.headers.warning),
      /^299 - "project \\"team-a\\" still has 4 virtual cluster instances in namespace \\"p-team-a\\": it is marked for deletion/,
    );
    await eventually(async () => {
      const project = (await client.send("GET", `${API}/projects/team-a`, { token: admin })).json();
      return project.status?.phase === "Terminating";
    }, "the project to report what it waits for");
    const project = (await client.send("GET", `${API}/projects/team-a`, { token: admin })).json();
    const condition = project.status.conditions.find((c: { type: string }) => c.type === "InstancesRemaining");
    assert.equal(condition.status, "True");
    assert.match(
      condition.message,
      /waiting for 4 virtual cluster instances in namespace "p-team-a" to be deleted \(by-ann, by-ed, one, two\)/,
    );
    const late = await client.send("POST", instancesOf("p-team-a"), { token: admin, body: instance("late") });
    assert.equal(late.status, 422);
    assert.match(late.json().message, /project "team-a" is being deleted/);

    for (const name of ["by-ann", "by-ed", "one"]) {
      assert.equal((await client.send("DELETE", `${instancesOf("p-team-a")}/${name}`, { token: admin })).status, 200);
    }
    await eventually(async () => {
      const now = (await client.send("GET", `${API}/projects/team-a`, { token: admin })).json();
      return /waiting for 1 virtual cluster instance in/.test(JSON.stringify(now.status?.conditions ?? []));
    }, "the message to follow the count");
    assert.equal((await client.send("GET", `${API}/projects/team-a`, { token: admin })).status, 200);
    await client.send("DELETE", `${instancesOf("p-team-a")}/two`, { token: admin });
    await eventually(
      async () => (await client.send("GET", `${API}/projects/team-a`, { token: admin })).status === 404,
      "the project to be gone",
    );
  });

  it("an empty project is deleted at once (kubectl delete waits for it)", { skip: kubectlSkip }, async () => {
    const out = await kubectl.ok(["delete", "project", "from-kubectl", "--timeout=30s"]);
    assert.match(out, /project.management.platform.sh "from-kubectl" deleted/);
    const gone = await client.send("GET", `${API}/projects/from-kubectl`, { token: admin });
    assert.equal(gone.status, 404);
  });

  it("a deleted project leaves nothing behind: the next project of that name sees none of its secrets or apps", async () => {
    const project = (owner: string) => ({
      apiVersion: V1,
      kind: "Project",
      metadata: { name: "doomed" },
      spec: { owner: { user: owner } },
    });
    assert.equal((await client.send("POST", `${API}/projects`, { token: admin, body: project("ann") })).status, 201);
    const secrets = `${API}/namespaces/p-doomed/projectsecrets`;
    const releases = `${API}/namespaces/p-doomed/helmreleases`;
    const secret = await client.send("POST", secrets, {
      token: keys.ann,
      body: {
        apiVersion: V1,
        kind: "ProjectSecret",
        metadata: { name: "db" },
        spec: { stringData: { password: "ann's" } },
      },
    });
    assert.equal(secret.status, 201, secret.body);
    const app = await client.send("POST", releases, {
      token: keys.ann,
      body: {
        apiVersion: V1,
        kind: "HelmRelease",
        metadata: { name: "app" },
        spec: { target: { virtualClusterInstance: "none-yet" }, chart: { name: "demo", repository: "charts" } },
      },
    });
    assert.equal(app.status, 201, app.body);
    assert.equal((await client.send("DELETE", `${API}/projects/doomed`, { token: admin })).status, 200);
    await eventually(
      async () => (await client.send("GET", `${API}/projects/doomed`, { token: admin })).status === 404,
      "the project to be gone",
    );
    assert.equal((await client.send("GET", `${secrets}/db`, { token: admin })).status, 404, "its secret went with it");
    assert.equal((await client.send("GET", `${releases}/app`, { token: admin })).status, 404, "and its app");
    // Someone else's project of the same name starts empty.
    assert.equal((await client.send("POST", `${API}/projects`, { token: admin, body: project("ed") })).status, 201);
    const seen = await client.send("GET", secrets, { token: keys.ed });
    assert.equal(seen.status, 200, seen.body);
    assert.deepEqual(seen.json().items, []);
    assert.deepEqual((await client.send("GET", releases, { token: keys.ed })).json().items, []);
  });

  it("a member removed from a project is told it left their view, but not what it became", async () => {
    await client.createUser(admin, "departing");
    const departing = await client.createKey(admin, "departing-key", { user: "departing" });
    const created = await client.send("POST", `${API}/projects`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "Project",
        metadata: { name: "leaving" },
        spec: { description: "before", members: [{ kind: "User", name: "departing", clusterRole: "view" }] },
      },
    });
    assert.equal(created.status, 201, created.body);
    const listed = await client.send("GET", `${API}/projects`, { token: departing });
    assert.deepEqual(
      listed.json().items.map((item: { metadata: { name: string } }) => item.metadata.name),
      ["leaving"],
    );
    const removed = await client.send("PATCH", `${API}/projects/leaving`, {
      token: admin,
      body: { spec: { description: "after", members: [] } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(removed.status, 200, removed.body);
    // From the list's version: the watch replays the removal whenever it connects.
    const from = listed.json().metadata.resourceVersion;
    const [line] = await client.watch(`${API}/projects?watch=true&resourceVersion=${from}`, departing, 1);
    const event = JSON.parse(line);
    assert.equal(event.type, "DELETED");
    assert.equal(event.object.spec.description, "before", "the version the member could see");
    assert.equal(event.object.metadata.resourceVersion, removed.json().metadata.resourceVersion);
    assert.equal((await client.send("GET", `${API}/projects/leaving`, { token: departing })).status, 403);
    assert.equal((await client.send("DELETE", `${API}/projects/leaving`, { token: admin })).status, 200);
  });

  it("a project secret whose value is a body-sized run of '=' is refused as not base64", async () => {
    // Counting the padding with /=+$/ took quadratic time on it: hours for this megabyte.
    const reply = await client.send("POST", `${API}/namespaces/p-default/projectsecrets`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "ProjectSecret",
        metadata: { name: "padding" },
        spec: { data: { key: `${"=".repeat(1_000_000)}x` } },
      },
    });
    assert.equal(reply.status, 422, reply.body);
    assert.match(reply.json().message, /must be base64-encoded/);
  });

  it("a restart keeps projects and does not bring back a deleted default project", async () => {
    await client.send("DELETE", `${instancesOf("p-default")}/listed`, { token: admin });
    await client.send("DELETE", `${instancesOf("p-default")}/reporting`, { token: admin });
    await client.send("DELETE", `${API}/projects/default`, { token: admin });
    await eventually(
      async () => (await client.send("GET", `${API}/projects/default`, { token: admin })).status === 404,
      "default to be gone",
    );
    await platform.stop();
    const restarted = await startPlatformProcess({ dataDir });
    const again = new AuthClient(restarted.url, restarted.caPem);
    try {
      const list = await again.send("GET", `${API}/projects`, { token: admin });
      assert.equal(list.status, 200);
      assert.equal(
        list.json().items.some((p: { metadata: { name: string } }) => p.metadata.name === "default"),
        false,
      );
    } finally {
      again.close();
      await restarted.stop();
    }
  });
});
