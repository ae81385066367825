import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { AuthorizationAttributes, ResourceDefinition, UserInfo } from "../registry/types.ts";
import { type AuthFixture, openAuthFixture, platform, testInstancesDefinition } from "./testing.ts";

const G = "management.platform.sh";

describe("PlatformAuthorizer", () => {
  let f: AuthFixture;
  const users: Record<string, UserInfo> = {};
  const ask = (who: string, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}) =>
    f.authorizer.decide({ user: users[who], verb, group: G, version: "v1", resource, resourceRequest: true, ...extra });
  const allowed = (who: string, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}) =>
    ask(who, verb, resource, extra).allowed;

  before(async () => {
    f = await openAuthFixture([testInstancesDefinition]);
    await f.createUser("root", { clusterRoles: [{ name: "admin" }] });
    await f.createUser("vera", { clusterRoles: [{ name: "viewer" }] });
    await f.createUser("bob", { groups: ["devs"] });
    await f.createUser("eve");
    await f.createTeam("devs", { groups: ["devs"] });
    await f.env.registry.genericStore(G, "virtualclusterinstances")!.create(
      platform(),
      "p-a",
      {
        apiVersion: `${G}/v1`,
        kind: "VirtualClusterInstance",
        metadata: { name: "vc1", namespace: "p-a" },
        spec: {
          owner: { user: "eve" },
          access: [
            { verbs: ["get", "update"], teams: ["devs"] },
            { verbs: ["*"], subresources: ["kubeconfig"], users: ["vera"] },
          ],
        },
      },
      {},
    );
    for (const [name, spec] of Object.entries({
      root: { user: "root" },
      vera: { user: "vera" },
      bob: { user: "bob" },
      eve: { user: "eve" },
      rootScoped: { user: "root", scope: { roles: [{ role: "virtualcluster", projects: ["*"] }] } },
      rootProject: { user: "root", scope: { projects: [{ project: "a" }] } },
      rootRules: {
        user: "root",
        scope: {
          rules: [{ verbs: ["*"], resources: [{ group: G, resources: ["ownedaccesskeys", "users/password"] }] }],
        },
      },
    })) {
      const key = await f.createKey(`key-${name.toLowerCase()}`, spec);
      users[name] = (await f.authenticator.authenticateToken(key, { touch: false }))!;
    }
  });
  after(() => f.close());

  it("decide() lets admins do everything, including escalate", () => {
    assert.ok(allowed("root", "delete", "users", { name: "bob" }));
    assert.ok(allowed("root", "escalate", "users", { name: "bob" }));
    assert.ok(f.authorizer.decide({ user: users.root, verb: "get", path: "/metrics", resourceRequest: false }).allowed);
  });

  it("decide() lets viewers read everything and write nothing", () => {
    assert.ok(allowed("vera", "list", "users"));
    assert.ok(allowed("vera", "watch", "ownedaccesskeys"));
    assert.ok(allowed("vera", "get", "users", { name: "root", subresource: "accesskeys" }));
    assert.equal(allowed("vera", "update", "users", { name: "bob" }), false);
    assert.equal(allowed("vera", "create", "teams"), false);
    assert.equal(allowed("vera", "create", "users", { name: "bob", subresource: "password" }), false);
  });

  it("decide() gives a plain user its own User, keys, password and teams, and nothing of others", () => {
    assert.ok(allowed("bob", "get", "users", { name: "bob" }));
    assert.ok(allowed("bob", "patch", "users", { name: "bob" }));
    assert.ok(allowed("bob", "watch", "users", { name: "bob" }));
    assert.ok(allowed("bob", "create", "users", { name: "bob", subresource: "password" }));
    assert.ok(allowed("bob", "get", "users", { name: "bob", subresource: "accesskeys" }));
    assert.ok(allowed("bob", "list", "ownedaccesskeys"));
    assert.ok(allowed("bob", "create", "ownedaccesskeys"));
    assert.ok(allowed("bob", "get", "teams", { name: "devs" }));
    assert.ok(allowed("bob", "create", "selves"));
    assert.equal(allowed("bob", "list", "users"), false);
    assert.equal(allowed("bob", "get", "users", { name: "root" }), false);
    assert.equal(allowed("bob", "delete", "users", { name: "bob" }), false);
    assert.equal(allowed("bob", "escalate", "users", { name: "bob" }), false);
    assert.equal(allowed("bob", "create", "users", { name: "root", subresource: "password" }), false);
    assert.equal(allowed("bob", "update", "ownedaccesskeys", { name: "x", subresource: "status" }), false);
    assert.equal(allowed("bob", "update", "teams", { name: "devs" }), false);
    assert.equal(allowed("bob", "create", "teams"), false);
  });

  it("decide() grants what object access rules and ownership say, never escalate", () => {
    const vc = { namespace: "p-a", name: "vc1" };
    assert.ok(allowed("bob", "get", "virtualclusterinstances", vc), "team rule");
    assert.ok(allowed("bob", "update", "virtualclusterinstances", vc), "team rule");
    assert.equal(allowed("bob", "delete", "virtualclusterinstances", vc), false);
    assert.equal(allowed("bob", "get", "virtualclusterinstances", { ...vc, subresource: "status" }), false);
    assert.ok(allowed("eve", "delete", "virtualclusterinstances", vc), "owner");
    assert.equal(allowed("eve", "escalate", "virtualclusterinstances", vc), false);
    assert.equal(allowed("eve", "bind", "virtualclusterinstances", vc), false);
    assert.ok(allowed("vera", "create", "virtualclusterinstances", { ...vc, subresource: "kubeconfig" }));
    assert.equal(allowed("vera", "escalate", "virtualclusterinstances", vc), false, "* never includes escalate");
    // A kubeconfig is within the rights of whoever may read the instance.
    assert.ok(allowed("bob", "create", "virtualclusterinstances", { ...vc, subresource: "kubeconfig" }));
    assert.equal(allowed("bob", "get", "virtualclusterinstances", { namespace: "p-b", name: "vc1" }), false);
  });

  it("decide() narrows an admin's key to its scope and says so", () => {
    const decision = ask("rootScoped", "list", "users");
    assert.deepEqual(decision, { allowed: false, reason: "the access key's scope does not allow it" });
    assert.ok(allowed("rootScoped", "get", "virtualclusterinstances", { namespace: "p-a", name: "vc1" }));
    assert.ok(allowed("rootProject", "delete", "virtualclusterinstances", { namespace: "p-a", name: "vc1" }));
    assert.equal(allowed("rootProject", "delete", "virtualclusterinstances", { namespace: "p-b", name: "vc1" }), false);
  });

  it("decide() never lets a scoped key create or change access keys or passwords, whatever its rules say", () => {
    assert.ok(allowed("rootRules", "get", "ownedaccesskeys", { name: "x" }));
    for (const verb of ["create", "update", "patch"]) {
      const decision = ask("rootRules", verb, "ownedaccesskeys", { name: "x" });
      assert.equal(decision.allowed, false, verb);
      assert.match(decision.reason ?? "", /scoped access key cannot create or change access keys/);
    }
    assert.equal(allowed("rootRules", "create", "users", { name: "root", subresource: "password" }), false);
  });

  it("decide() denies callers it does not know, and allows the platform's own work", () => {
    const stranger = { name: "bob", groups: ["system:authenticated"] };
    assert.equal(
      f.authorizer.decide({ user: stranger, verb: "get", resource: "users", name: "bob", resourceRequest: true })
        .allowed,
      false,
    );
    const decision = f.authorizer.decide({
      user: { name: "x", groups: ["system:masters"] },
      verb: "delete",
      resource: "users",
      resourceRequest: true,
    });
    assert.ok(decision.allowed);
  });
});
