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

describe("platformRules() through PlatformAuthorizer.rulesFor()", () => {
  let f: AuthFixture;
  const users: Record<string, UserInfo> = {};

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
        spec: { owner: { user: "eve" }, access: [{ verbs: ["get", "update"], teams: ["devs"] }] },
      },
      {},
    );
    for (const [name, spec] of Object.entries({
      root: { user: "root" },
      vera: { user: "vera" },
      bob: { user: "bob" },
      eve: { user: "eve" },
      rootInstance: { user: "root", scope: { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] } },
      rootRules: {
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

  const rules = (who: string, namespace = "p-a") => f.authorizer.rulesFor(users[who], namespace);
  const allowed = (who: string, request: Omit<AuthorizationAttributes, "user">) =>
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
    const ruled = await rules("rootRules");
    assert.deepEqual(listed(ruled, "users"), ["get", "list"]);
    assert.deepEqual(
      ruled.nonResourceRules.find((r) => r.nonResourceURLs.includes("/healthz")),
      { verbs: ["get"], nonResourceURLs: ["/healthz"] },
    );
  });

  for (const who of ["vera", "bob", "eve", "rootInstance", "rootRules"]) {
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
                assert.ok(allowed(who, request), `listed but denied: ${JSON.stringify(request)}`);
              }
            }
          }
        }
        for (const rule of list.nonResourceRules) {
          for (const verb of rule.verbs) {
            for (const path of rule.nonResourceURLs) {
              assert.ok(allowed(who, { resourceRequest: false, verb, path }), `listed but denied: ${verb} ${path}`);
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
                assert.equal(allowed(who, request), false, `allowed but not listed: ${JSON.stringify(request)}`);
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
              assert.equal(allowed(who, { resourceRequest: false, verb, path }), false, `not listed: ${verb} ${path}`);
            }
          }
        }
      });
    }
  }
});
