import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { resourceVerbs } from "../http/resource-verbs.ts";
import type { AuthorizationAttributes, SubjectRules, UserInfo } from "../registry/types.ts";
import { type AuthFixture, openAuthFixture, platform, testInstancesDefinition } from "./testing.ts";

const G = "management.platform.sh";
/** Names some caller holds something on, and one nobody does. */
const SAMPLE_NAMES = ["bob", "eve", "root", "devs", "vc1", "nobody"];
const SAMPLE_PATHS = ["*", "/api", "/apis/x", "/openapi/v2", "/version", "/auth/logout", "/metrics", "/healthz"];
const URL_VERBS = ["get", "head", "post", "put", "patch", "delete"];

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
      rootInstance: { user: "root", scope: { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] } },
      rootReads: {
        user: "root",
        scope: {
          rules: [
            { verbs: ["get", "list"], resources: [{ group: G, resources: ["users"] }] },
            { verbs: ["get"], nonResourceURLs: ["/healthz"] },
          ],
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

  const rules = (who: string, namespace = "p-a") => f.authorizer.rulesFor(users[who], namespace);
  const decides = (who: string, request: Omit<AuthorizationAttributes, "user">) =>
    f.authorizer.decide({ ...request, user: users[who] }).allowed;
  /** The verbs listed for group/resource, for any name or (with `name`) for that one. */
  const listed = (list: SubjectRules, resource: string, name?: string) =>
    list.resourceRules
      .filter((r) => r.resources.includes(resource) && (!r.resourceNames || (name && r.resourceNames.includes(name))))
      .flatMap((r) => r.verbs);

  it("rulesFor() lists everything, as wildcards, for an unscoped admin", async () => {
    assert.deepEqual(await rules("root"), {
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      incomplete: false,
    });
  });

  it("rulesFor() lists a plain user's own things by name and an object's access rules", async () => {
    const bob = await rules("bob");
    assert.deepEqual(
      bob.resourceRules.find((r) => r.resources[0] === "users"),
      {
        verbs: ["get", "list", "patch", "update", "watch"],
        apiGroups: [G],
        resources: ["users"],
        resourceNames: ["bob"],
      },
    );
    assert.deepEqual(listed(bob, "virtualclusterinstances", "vc1"), ["get", "update"], "the team's access rule");
    assert.deepEqual(listed(bob, "teams", "devs"), ["get", "list", "watch"]);
    assert.ok(listed(bob, "ownedaccesskeys").includes("create"), "the store shows each caller its own keys");
    const eve = await rules("eve");
    assert.deepEqual(listed(eve, "virtualclusterinstances", "vc1"), [
      "create",
      "delete",
      "get",
      "list",
      "patch",
      "update",
      "watch",
    ]);
    assert.deepEqual(listed(await rules("eve", "default"), "virtualclusterinstances", "vc1"), [], "other namespace");
  });

  it("rulesFor() lists what a key's scope leaves of an admin's rights", async () => {
    const scoped = await rules("rootInstance");
    assert.deepEqual(listed(scoped, "users"), []);
    assert.ok(listed(scoped, "virtualclusterinstances", "vc1").includes("delete"));
    const ruled = await rules("rootReads");
    assert.deepEqual(listed(ruled, "users"), ["get", "list"]);
    assert.deepEqual(
      ruled.nonResourceRules.find((r) => r.nonResourceURLs.includes("/healthz")),
      { verbs: ["get"], nonResourceURLs: ["/healthz"] },
    );
  });

  for (const who of ["vera", "bob", "eve", "rootScoped", "rootProject", "rootRules", "rootInstance", "rootReads"]) {
    for (const namespace of ["p-a", "default"]) {
      it(`rulesFor() lists only what decide() allows, and leaves out what it denies (${who} in ${namespace})`, async () => {
        const list = await rules(who, namespace);
        const definitions = f.env.registry.stores().map((s) => s.definition);
        const nsOf = (resource: string) =>
          definitions.find((d) => d.plural === resource)?.namespaced ? namespace : undefined;
        for (const rule of list.resourceRules) {
          for (const verb of rule.verbs) {
            for (const entry of rule.resources) {
              const [resource, subresource] = entry.split("/");
              for (const name of rule.resourceNames ?? [undefined]) {
                const request = {
                  resourceRequest: true,
                  verb,
                  group: rule.apiGroups[0],
                  resource,
                  subresource,
                  namespace: nsOf(resource),
                  name,
                };
                assert.ok(decides(who, request), `listed but denied: ${JSON.stringify(request)}`);
              }
            }
          }
        }
        for (const rule of list.nonResourceRules) {
          for (const verb of rule.verbs) {
            for (const path of rule.nonResourceURLs) {
              assert.ok(decides(who, { resourceRequest: false, verb, path }), `listed but denied: ${verb} ${path}`);
            }
          }
        }
        // The other way round, on a sample: every served verb, on any object and on sample names.
        for (const d of definitions) {
          const targets: [string | undefined, readonly string[]][] = [[undefined, resourceVerbs(d)]];
          for (const [sub, handler] of Object.entries(d.subresources ?? {})) targets.push([sub, handler.verbs]);
          for (const [subresource, verbs] of targets) {
            const entry = subresource ? `${d.plural}/${subresource}` : d.plural;
            for (const name of [undefined, ...SAMPLE_NAMES]) {
              const covered = listed(list, entry, name);
              for (const verb of verbs.filter((v) => !covered.includes(v))) {
                const request = {
                  resourceRequest: true,
                  verb,
                  group: d.group,
                  resource: d.plural,
                  subresource,
                  namespace: d.namespaced ? namespace : undefined,
                  name,
                };
                assert.equal(decides(who, request), false, `allowed but not listed: ${JSON.stringify(request)}`);
              }
            }
          }
        }
        for (const path of SAMPLE_PATHS) {
          for (const verb of URL_VERBS) {
            const covered = list.nonResourceRules.some(
              (r) =>
                r.verbs.includes(verb) &&
                r.nonResourceURLs.some(
                  (u) => u === "*" || u === path || (u.endsWith("/*") && path.startsWith(u.slice(0, -1))),
                ),
            );
            if (!covered) {
              assert.equal(decides(who, { resourceRequest: false, verb, path }), false, `not listed: ${verb} ${path}`);
            }
          }
        }
      });
    }
  }
});
