// kubectl against the real platform over HTTPS: every command a platform engineer uses on users.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const userYaml = (name: string, email: string, extra = "") => `apiVersion: management.platform.sh/v1
kind: User
metadata:
  name: ${name}
spec:
  displayName: ${name}
  email: ${email}
  username: ${name}
  subject: ${name}
  clusterRoles:
  - name: viewer
${extra}`;

describe("kubectl against the platform", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let kubectl: Kubectl;

  before(async () => {
    platform = await startPlatformProcess();
    kubectl = new Kubectl(platform.kubeconfig);
  });
  after(() => platform?.stop());

  it("get users lists the bootstrap admin with the User columns", async () => {
    const out = await kubectl.ok(["get", "users"]);
    const [header, row] = out.trim().split("\n");
    assert.match(header, /^NAME\s+USERNAME\s+EMAIL\s+DISABLED\s+AGE$/);
    assert.match(row, /^admin\s+admin\s+.*false\s+\d+s$/);
  });

  it("get -o yaml returns the full object", async () => {
    const admin = parse(await kubectl.ok(["get", "user", "admin", "-o", "yaml"]));
    assert.equal(admin.kind, "User");
    assert.deepEqual(admin.spec.clusterRoles, [{ name: "admin" }]);
    assert.ok(admin.metadata.uid);
  });

  it("api-resources shows users with short name and category", async () => {
    const out = await kubectl.ok(["api-resources", "--api-group=management.platform.sh"]);
    assert.match(out, /users\s+usr\s+management\.platform\.sh\/v1\s+false\s+User/);
    const byCategory = await kubectl.ok(["get", "platform"]);
    assert.match(byCategory, /admin/);
  });

  it("explain describes the User fields from the OpenAPI schema", async () => {
    const out = await kubectl.ok(["explain", "users.spec.disabled"]);
    assert.match(out, /When true the user can no longer log in/);
  });

  it("apply creates with strict validation, reports unknown fields, and updates (client-side)", async () => {
    const created = await kubectl.ok(["apply", "-f", "-"], userYaml("alice", "alice@example.com"));
    assert.match(created, /user.management.platform.sh\/alice created/);
    const bad = await kubectl.run(["apply", "-f", "-"], userYaml("bob", "bob@example.com", "  shoeSize: 44\n"));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /unknown field "spec.shoeSize"/);
    const configured = await kubectl.ok(["apply", "-f", "-"], userYaml("alice", "alice@new.example.com"));
    assert.match(configured, /user.management.platform.sh\/alice configured/);
    const email = await kubectl.ok(["get", "user", "alice", "-o", "jsonpath={.spec.email}"]);
    assert.equal(email, "alice@new.example.com");
  });

  it("apply --server-side creates, conflicts with another manager, and force takes over", async () => {
    const created = await kubectl.ok(["apply", "--server-side", "-f", "-"], userYaml("carol", "carol@example.com"));
    assert.match(created, /serverside-applied/);
    await kubectl.ok(["patch", "user", "carol", "--type=merge", "-p", '{"spec":{"email":"other@example.com"}}']);
    const conflict = await kubectl.run(["apply", "--server-side", "-f", "-"], userYaml("carol", "carol@example.com"));
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "kubectl-patch"/);
    assert.match(conflict.stderr, /\.spec\.email/);
    await kubectl.ok(
      ["apply", "--server-side", "--force-conflicts", "-f", "-"],
      userYaml("carol", "carol@example.com"),
    );
    const email = await kubectl.ok(["get", "user", "carol", "-o", "jsonpath={.spec.email}"]);
    assert.equal(email, "carol@example.com");
  });

  it("create with generateName makes a unique name", async () => {
    const yaml = userYaml("x", "gen@example.com").replace("  name: x", "  generateName: gen-");
    const out = await kubectl.ok(["create", "-f", "-", "-o", "name"], yaml);
    assert.match(out.trim(), /^user.management.platform.sh\/gen-[a-z0-9]{5}$/);
  });

  it("replace, patch --type=json and --type=merge, label and annotate edit the object", async () => {
    await kubectl.ok(["create", "-f", "-"], userYaml("dave", "dave@example.com"));
    const current = parse(await kubectl.ok(["get", "user", "dave", "-o", "yaml"]));
    current.spec.displayName = "Dave Replaced";
    await kubectl.ok(["replace", "-f", "-"], JSON.stringify(current));
    await kubectl.ok([
      "patch",
      "user",
      "dave",
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/spec/email","value":"d@example.com"}]',
    ]);
    await kubectl.ok(["patch", "user", "dave", "--type=merge", "-p", '{"spec":{"disabled":true}}']);
    await kubectl.ok(["label", "user", "dave", "team=blue"]);
    await kubectl.ok(["annotate", "user", "dave", "note=hello"]);
    const dave = parse(await kubectl.ok(["get", "user", "dave", "-o", "yaml"]));
    assert.equal(dave.spec.displayName, "Dave Replaced");
    assert.equal(dave.spec.email, "d@example.com");
    assert.equal(dave.spec.disabled, true);
    assert.equal(dave.metadata.labels.team, "blue");
    assert.equal(dave.metadata.annotations.note, "hello");
    const selected = await kubectl.ok(["get", "users", "-l", "team=blue", "-o", "name"]);
    assert.equal(selected.trim(), "user.management.platform.sh/dave");
    const stale = await kubectl.run(["replace", "-f", "-"], JSON.stringify(current));
    assert.notEqual(stale.code, 0);
    assert.match(stale.stderr, /the object has been modified/);
  });

  it("patch without --type is refused clearly (strategic merge is unsupported)", async () => {
    const result = await kubectl.run(["patch", "user", "admin", "-p", '{"spec":{"icon":"x"}}']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /UnsupportedMediaType|unknown format|not supported/i);
  });

  it("delete waits for finalizers; wait --for=delete returns when they are removed", async () => {
    await kubectl.ok(
      ["create", "-f", "-"],
      userYaml("erin", "erin@example.com").replace("  name: erin", "  name: erin\n  finalizers:\n  - example.com/hold"),
    );
    await kubectl.ok(["delete", "user", "erin", "--wait=false"]);
    const pending = parse(await kubectl.ok(["get", "user", "erin", "-o", "yaml"]));
    assert.ok(pending.metadata.deletionTimestamp);
    const waiter = kubectl.start(["wait", "--for=delete", "user/erin", "--timeout=30s"]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await kubectl.ok(["patch", "user", "erin", "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
    assert.equal(await waiter.exited, 0, waiter.output());
    const gone = await kubectl.run(["get", "user", "erin"]);
    assert.match(gone.stderr, /users.management.platform.sh "erin" not found/);
  });

  it("delete --wait returns once the object is gone", async () => {
    await kubectl.ok(["create", "-f", "-"], userYaml("frank", "frank@example.com"));
    const out = await kubectl.ok(["delete", "user", "frank", "--wait=true", "--timeout=30s"]);
    assert.match(out, /user.management.platform.sh "frank" deleted/);
  });

  it("get -w prints changes as they happen", async () => {
    await kubectl.ok(["create", "-f", "-"], userYaml("grace", "grace@example.com"));
    const watcher = kubectl.start(["get", "users", "grace", "-w", "--output-watch-events"]);
    await eventually(() => watcher.output().includes("grace"), "the initial row");
    await kubectl.ok(["label", "user", "grace", "seen=yes"]);
    await eventually(() => /MODIFIED\s+grace/.test(watcher.output()), "the MODIFIED row");
    watcher.child.kill("SIGTERM");
    await watcher.exited;
  });

  it("errors reach kubectl as readable Status messages", async () => {
    const missing = await kubectl.run(["get", "user", "nobody"]);
    assert.match(missing.stderr, /Error from server \(NotFound\): users.management.platform.sh "nobody" not found/);
    const invalid = await kubectl.run(["create", "-f", "-"], userYaml("Bad_Name", "x@example.com"));
    assert.match(invalid.stderr, /The User "Bad_Name" is invalid/);
  });

  it("refuses a missing or wrong token with 401", async () => {
    const wrong = await kubectl.run(["get", "users", "--token", "not-a-real-key"]);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /You must be logged in to the server/);
  });
});
