// `kubectl auth whoami` and `kubectl auth can-i` against the platform: they ask the Kubernetes groups
// (authentication.k8s.io SelfSubjectReview, authorization.k8s.io SelfSubjectAccessReview), which the platform
// answers with its own authentication and authorizer.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
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
});
