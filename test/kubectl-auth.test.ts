// `kubectl auth whoami`, `kubectl auth can-i` and `can-i --list` against the platform and the cluster API server:
// they ask the Kubernetes groups (authentication.k8s.io SelfSubjectReview, authorization.k8s.io
// SelfSubjectAccessReview and SelfSubjectRulesReview), which each server answers with its own authentication and
// authorizer.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningClusterApiServer, startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { AuthClient } from "./support/auth-client.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

describe("kubectl auth against the platform", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let kubectl: Kubectl;
  let bob: string;

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    await client.createUser(platform.adminKey, "bob", { groups: ["devs"] });
    bob = await client.createKey(platform.adminKey, "bob-main", { user: "bob" });
    kubectl = new Kubectl(platform.kubeconfig);
  });
  after(async () => {
    client?.close();
    await platform?.stop();
  });

  it("kubectl auth whoami names the caller and its groups", async () => {
    const admin = await kubectl.ok(["auth", "whoami", "-o", "json"]);
    assert.equal(JSON.parse(admin).status.userInfo.username, "admin");
    const asBob = JSON.parse(await kubectl.ok(["--token", bob, "auth", "whoami", "-o", "json"]));
    assert.equal(asBob.kind, "SelfSubjectReview");
    assert.equal(asBob.status.userInfo.username, "bob");
    assert.ok(asBob.status.userInfo.groups.includes("devs"), JSON.stringify(asBob));
    assert.equal(JSON.stringify(asBob).includes(bob), false, "the key is not echoed");
    assert.match(await kubectl.ok(["--token", bob, "auth", "whoami"]), /bob/);
  });

  it("kubectl auth can-i answers with the platform's authorizer", async () => {
    assert.equal((await kubectl.ok(["auth", "can-i", "create", "users.management.platform.sh"])).trim(), "yes");
    const denied = await kubectl.run(["--token", bob, "auth", "can-i", "create", "users.management.platform.sh"]);
    assert.equal(denied.code, 1, denied.stderr);
    assert.equal(denied.stdout.trim(), "no");
    const own = await kubectl.ok(["--token", bob, "auth", "can-i", "get", "users.management.platform.sh/bob"]);
    assert.equal(own.trim(), "yes");
  });

  it("kubectl auth can-i --list shows an admin everything", async () => {
    const rows = canIList(await kubectl.ok(["auth", "can-i", "--list"]));
    assert.deepEqual(rows, [
      { resource: "*.*", urls: "[]", names: "[]", verbs: "[*]" },
      { resource: "", urls: "[*]", names: "[]", verbs: "[*]" },
    ]);
  });

  it("kubectl auth can-i --list shows a user its own rights, each one allowed and nothing more", async () => {
    const rows = canIList(await kubectl.ok(["--token", bob, "auth", "can-i", "--list"]));
    const row = (resource: string, names = "[]") => rows.find((r) => r.resource === resource && r.names === names);
    assert.equal(row("users.management.platform.sh", "[bob]")?.verbs, "[get list patch update watch]");
    assert.equal(row("users.management.platform.sh/password", "[bob]")?.verbs, "[create]");
    assert.equal(row("selfsubjectrulesreviews.authorization.k8s.io")?.verbs, "[create]");
    assert.ok(
      rows.some((r) => r.urls === "[/apis/*]"),
      "discovery",
    );
    assert.equal(row("*.*"), undefined);
    assert.equal(row("users.management.platform.sh"), undefined, "not every user");
    // What the list says, can-i says too: a sample of each resource row's verbs, and verbs it leaves out.
    const can = async (...args: string[]) =>
      (await kubectl.run(["--token", bob, "auth", "can-i", ...args])).stdout.trim();
    for (const r of rows.filter((r) => r.resource && r.names === "[]")) {
      const verb = r.verbs.slice(1, -1).split(" ")[0];
      assert.equal(await can(verb, r.resource), "yes", `${verb} ${r.resource}`);
    }
    assert.equal(await can("get", "users.management.platform.sh/bob"), "yes");
    assert.equal(await can("delete", "users.management.platform.sh/bob"), "no");
    assert.equal(await can("list", "users.management.platform.sh"), "no");
    assert.equal(await can("create", "teams.management.platform.sh"), "no");
  });
});

describe("kubectl auth can-i --list against the cluster API server", { skip: kubectlSkip }, () => {
  let dataDir: string;
  let server: RunningClusterApiServer;
  let kubectl: Kubectl;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vc-can-i-"));
    // A second caller without system:masters: "dana-token" authenticates as dana through the servers' own option.
    const dana = {
      authenticate: (request: { bearerToken?: string }) =>
        request.bearerToken === "dana-token" ? { name: "dana", groups: ["auditors"] } : undefined,
    };
    server = await startClusterApiServer({ dataDir, port: 0, authenticators: [dana] });
    kubectl = new Kubectl(server.kubeconfigPath);
  });
  after(async () => {
    await server?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("kubectl auth can-i --list lists the RBAC rules bound to the caller in the namespace", async () => {
    assert.deepEqual(canIList(await kubectl.ok(["auth", "can-i", "--list"])).slice(0, 2), [
      { resource: "*.*", urls: "[]", names: "[]", verbs: "[*]" },
      { resource: "", urls: "[*]", names: "[]", verbs: "[*]" },
    ]);
    await kubectl.ok(["create", "namespace", "ops"]);
    await kubectl.ok([
      "create",
      "role",
      "tls-reader",
      "-n",
      "ops",
      "--verb=get",
      "--resource=secrets",
      "--resource-name=tls",
    ]);
    await kubectl.ok(["create", "rolebinding", "dana-tls", "-n", "ops", "--role=tls-reader", "--user=dana"]);
    await kubectl.ok(["create", "clusterrole", "ns-lister", "--verb=list", "--resource=namespaces"]);
    await kubectl.ok(["create", "clusterrolebinding", "auditors-ns", "--clusterrole=ns-lister", "--group=auditors"]);
    const asDana = (...args: string[]) => kubectl.ok(["--token", "dana-token", ...args]);
    const inOps = canIList(await asDana("auth", "can-i", "--list", "-n", "ops"));
    const row = (resource: string) => inOps.find((r) => r.resource === resource);
    assert.deepEqual(row("secrets"), { resource: "secrets", urls: "[]", names: "[tls]", verbs: "[get]" });
    assert.equal(row("namespaces")?.verbs, "[list]");
    assert.equal(row("selfsubjectrulesreviews.authorization.k8s.io")?.verbs, "[create]", "system:basic-user");
    assert.equal(row("*.*"), undefined);
    assert.equal(
      canIList(await asDana("auth", "can-i", "--list", "-n", "default")).some((r) => r.resource === "secrets"),
      false,
    );
    assert.equal((await asDana("auth", "can-i", "get", "secrets/tls", "-n", "ops")).trim(), "yes");
    const other = await kubectl.run(["--token", "dana-token", "auth", "can-i", "get", "secrets/other", "-n", "ops"]);
    assert.equal(other.stdout.trim(), "no");
  });
});

interface CanIRow {
  resource: string;
  urls: string;
  names: string;
  verbs: string;
}

/** The table `kubectl auth can-i --list` prints, cut at the header's column starts. */
function canIList(output: string): CanIRow[] {
  const [header, ...lines] = output.split("\n").filter((line) => line.trim() !== "");
  const starts = ["Non-Resource URLs", "Resource Names", "Verbs"].map((title) => header.indexOf(title));
  assert.ok(
    starts.every((start) => start > 0),
    header,
  );
  const cut = (line: string, from: number, to?: number) => line.slice(from, to).trim();
  return lines.map((line) => ({
    resource: cut(line, 0, starts[0]),
    urls: cut(line, starts[0], starts[1]),
    names: cut(line, starts[1], starts[2]),
    verbs: cut(line, starts[2]),
  }));
}
