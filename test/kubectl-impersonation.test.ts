// Kubernetes impersonation with the real kubectl (`--as`, `--as-group`, `--as-uid`) against the platform and the
// cluster API server: the request runs as the impersonated identity (whoami, can-i and real requests agree), only a
// caller with the verb impersonate on each part may ask (403 otherwise, never carried out as the caller), a scoped
// key gains nothing by it, and the audit event names both identities.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningClusterApiServer, startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import type { CompletedRequest } from "../src/http/types.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const whoami = async (kubectl: Kubectl, ...args: string[]) =>
  JSON.parse(await kubectl.ok([...args, "auth", "whoami", "-o", "json"])).status.userInfo;

describe("kubectl impersonation against the platform", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let kubectl: Kubectl;
  let bob: string;

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    const admin = platform.adminKey;
    await client.createUser(admin, "dave", { groups: ["devs"] });
    await client.createUser(admin, "erin", { clusterRoles: [{ name: "admin" }] });
    await client.createUser(admin, "frank", { disabled: true });
    await client.createUser(admin, "bob");
    await client.createTeam(admin, "ops", { groups: ["ops"], clusterRoles: [{ name: "viewer" }] });
    bob = await client.createKey(admin, "bob-main", { user: "bob" });
    kubectl = new Kubectl(platform.kubeconfig);
  });
  after(async () => {
    client?.close();
    await platform?.stop();
  });

  it("kubectl --as dave acts as dave: whoami, can-i and his own requests tell the truth", async () => {
    const dave = await whoami(kubectl, "--as", "dave");
    assert.equal(dave.username, "dave");
    assert.ok(dave.groups.includes("devs"), JSON.stringify(dave));
    const canI = await kubectl.run(["auth", "can-i", "create", "projects.management.platform.sh", "--as", "dave"]);
    assert.equal(canI.stdout.trim(), "no", canI.stderr);
    assert.equal(canI.code, 1);
    assert.equal(
      (await kubectl.ok(["auth", "can-i", "get", "users.management.platform.sh/dave", "--as", "dave"])).trim(),
      "yes",
    );
    const list = await kubectl.run(["get", "users.management.platform.sh", "--as", "dave"]);
    assert.notEqual(list.code, 0);
    assert.match(list.stderr, /User "dave" cannot list resource "users"/);
    assert.match(await kubectl.ok(["get", "users.management.platform.sh/dave", "--as", "dave"]), /dave/);
    // An admin impersonated is an admin.
    assert.equal(
      (await kubectl.ok(["auth", "can-i", "create", "projects.management.platform.sh", "--as", "erin"])).trim(),
      "yes",
    );
  });

  it("--as-group replaces the user's groups: a team's rights through its group, none without it", async () => {
    const withOps = await whoami(kubectl, "--as", "dave", "--as-group", "ops");
    assert.equal(withOps.username, "dave");
    assert.ok(withOps.groups.includes("ops") && !withOps.groups.includes("devs"), JSON.stringify(withOps));
    assert.match(
      await kubectl.ok(["get", "users.management.platform.sh", "--as", "dave", "--as-group", "ops"]),
      /erin/,
    );
    const team = await whoami(kubectl, "--as", "team:ops");
    assert.equal(team.username, "team:ops");
  });

  it("only admins may impersonate: anyone else gets a 403 naming the right, never an answer as himself", async () => {
    // --raw: without a discovery cache kubectl would report its refused discovery as "unknown".
    const refused = await kubectl.run(["--token", bob, "get", "--raw", `${API}/users/bob`, "--as", "dave"]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /users "dave" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    const asGroup = await client.send("GET", `${API}/users/bob`, {
      token: bob,
      headers: { "Impersonate-User": "bob", "Impersonate-Group": ["devs", "ops"] },
    });
    assert.equal(asGroup.status, 403, asGroup.body);
    const noUser = await client.send("GET", `${API}/users/bob`, {
      token: bob,
      headers: { "Impersonate-Group": "ops" },
    });
    assert.equal(noUser.status, 400, noUser.body);
    assert.match(noUser.json().message, /without impersonating a user/);
    const disabled = await kubectl.run(["get", "--raw", `${API}/users/frank`, "--as", "frank"]);
    assert.notEqual(disabled.code, 0);
    assert.match(disabled.stderr, /the user is disabled/);
    const uid = await kubectl.run(["get", "--raw", `${API}/users/dave`, "--as", "dave", "--as-uid", "not-daves"]);
    assert.match(uid.stderr, /is not the uid of user "dave"/);
  });

  it("a scoped key gains nothing by impersonating: its scope bounds the impersonated requests too", async () => {
    const admin = platform.adminKey;
    const projectOnly = await client.createKey(admin, "admin-alpha", {
      user: "admin",
      scope: { projects: [{ project: "alpha" }] },
    });
    const outOfScope = await kubectl.run(["--token", projectOnly, "get", "--raw", `${API}/users/erin`, "--as", "erin"]);
    assert.match(outOfScope.stderr, /cannot impersonate resource "users".*the access key's scope does not allow it/);
    const readOnly = await client.createKey(admin, "admin-impersonate-read", {
      user: "admin",
      scope: {
        rules: [
          { verbs: ["impersonate"], resources: [{ group: "", resources: ["users"] }] },
          { verbs: ["get", "list"], resources: [{ group: "management.platform.sh", resources: ["users"] }] },
        ],
      },
    });
    assert.match(
      await kubectl.ok(["--token", readOnly, "get", "users.management.platform.sh", "--as", "erin"]),
      /dave/,
    );
    const write = await kubectl.run([
      "--token",
      readOnly,
      "delete",
      "users.management.platform.sh/bob",
      "--as",
      "erin",
    ]);
    assert.notEqual(write.code, 0);
    assert.match(write.stderr, /User "erin" cannot delete .*the access key's scope does not allow it/);
    assert.equal((await client.send("GET", `${API}/users/bob`, { token: admin })).status, 200, "bob is still there");
  });

  it("the audit event names the caller as user and the identity as impersonatedUser", async () => {
    const admin = platform.adminKey;
    const path = join(platform.dataDir, "audit", "audit.log");
    const config = await client.send("PATCH", `${API}/configs/platform-config`, {
      token: admin,
      contentType: "application/merge-patch+json",
      body: { spec: { raw: `audit:\n  enabled: true\n  level: 1\n  path: ${path}\n` } },
    });
    assert.equal(config.status, 200, config.body);
    let auditId = "";
    await eventually(async () => {
      const reply = await client.send("GET", `${API}/users/dave`, {
        token: admin,
        headers: { "Impersonate-User": "dave" },
      });
      assert.equal(reply.status, 200, reply.body);
      auditId = String(reply.headers["audit-id"] ?? "");
      return auditId !== "";
    }, "audit to be on");
    const events = async () => {
      const reply = await client.send("GET", `${API}/auditevents?fieldSelector=metadata.name=${auditId}`, {
        token: admin,
      });
      return reply.status === 200 ? reply.json().items : [];
    };
    await eventually(
      async () =>
        (await events()).some((item: { event: { stage: string } }) => item.event.stage === "ResponseComplete"),
      "the event",
    );
    const event = (await events()).find(
      (item: { event: { stage: string } }) => item.event.stage === "ResponseComplete",
    ).event;
    assert.equal(event.user.username, "admin");
    assert.equal(event.impersonatedUser.username, "dave");
    assert.ok(event.impersonatedUser.groups.includes("devs"));
  });
});

describe("kubectl impersonation against the cluster API server", { skip: kubectlSkip }, () => {
  let dataDir: string;
  let server: RunningClusterApiServer;
  let kubectl: Kubectl;
  const completed: CompletedRequest[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vc-impersonate-"));
    const dana = {
      authenticate: (request: { bearerToken?: string }) =>
        request.bearerToken === "dana-token" ? { name: "dana", groups: ["auditors"] } : undefined,
    };
    server = await startClusterApiServer({
      dataDir,
      port: 0,
      authenticators: [dana],
      hooks: { onRequestComplete: (request) => void completed.push(request) },
    });
    kubectl = new Kubectl(server.kubeconfigPath);
  });
  after(async () => {
    await server?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("an admin acts as any user, group or service account, as kube-apiserver builds them", async () => {
    assert.deepEqual(await whoami(kubectl, "--as", "dave", "--as-group", "devs"), {
      username: "dave",
      groups: ["devs", "system:authenticated"],
    });
    const account = await whoami(kubectl, "--as", "system:serviceaccount:default:builder");
    assert.deepEqual(account.groups, [
      "system:serviceaccounts",
      "system:serviceaccounts:default",
      "system:authenticated",
    ]);
    const withUid = await whoami(kubectl, "--as", "dave", "--as-uid", "1234");
    assert.equal(withUid.uid, "1234");
    const denied = await kubectl.run(["auth", "can-i", "list", "secrets", "--as", "dave"]);
    assert.equal(denied.stdout.trim(), "no");
  });

  it("impersonating needs the verb impersonate on each part; RBAC grants it", async () => {
    const refused = await kubectl.run(["--token", "dana-token", "get", "namespaces", "--as", "dave"]);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /users "dave" is forbidden: User "dana" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    await kubectl.ok(["create", "namespace", "ops"]);
    await kubectl.ok([
      "create",
      "clusterrole",
      "impersonate-dave",
      "--verb=impersonate",
      "--resource=users",
      "--resource-name=dave",
    ]);
    await kubectl.ok(["create", "clusterrolebinding", "dana-as-dave", "--clusterrole=impersonate-dave", "--user=dana"]);
    await kubectl.ok(["create", "role", "secret-reader", "-n", "ops", "--verb=list", "--resource=secrets"]);
    await kubectl.ok(["create", "rolebinding", "dave-secrets", "-n", "ops", "--role=secret-reader", "--user=dave"]);
    const asDave = (...args: string[]) => kubectl.run(["--token", "dana-token", "--as", "dave", ...args]);
    assert.equal((await asDave("auth", "can-i", "list", "secrets", "-n", "ops")).stdout.trim(), "yes");
    assert.equal((await asDave("auth", "can-i", "list", "secrets", "-n", "default")).stdout.trim(), "no");
    assert.equal((await asDave("get", "secrets", "-n", "ops")).code, 0);
    const other = await kubectl.run(["--token", "dana-token", "--as", "erin", "get", "secrets", "-n", "ops"]);
    assert.match(other.stderr, /users "erin" is forbidden: User "dana" cannot impersonate/);
    const group = await asDave("--as-group", "admins", "get", "secrets", "-n", "ops");
    assert.match(group.stderr, /groups "admins" is forbidden: User "dana" cannot impersonate resource "groups"/);
    const uid = await asDave("--as-uid", "1", "get", "secrets", "-n", "ops");
    assert.match(
      uid.stderr,
      /uids.authentication.k8s.io "1" is forbidden: User "dana" cannot impersonate resource "uids" in API group "authentication.k8s.io"/,
    );
  });

  it("the audit record names the caller and the impersonated identity", async () => {
    completed.length = 0;
    await kubectl.ok(["get", "namespaces", "--as", "dave", "--as-group", "system:masters"]);
    const record = completed.find((r) => r.requestInfo.resource === "namespaces" && r.impersonatedUser);
    assert.ok(record, "an impersonated request was reported");
    assert.equal(record.user?.name, "admin");
    assert.deepEqual(record.impersonatedUser, { name: "dave", groups: ["system:masters", "system:authenticated"] });
  });
});
