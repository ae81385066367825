import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { AuthorizationAttributes } from "../registry/types.ts";
import { compileScope, projectOf } from "./scope.ts";

const user = { name: "bob", groups: [] };
const G = "management.platform.sh";
const request = (
  verb: string,
  resource: string,
  extra: Partial<AuthorizationAttributes> = {},
): AuthorizationAttributes => ({
  user,
  verb,
  group: G,
  version: "v1",
  resource,
  resourceRequest: true,
  ...extra,
});
const path = (verb: string, p: string): AuthorizationAttributes => ({ user, verb, path: p, resourceRequest: false });

describe("compileScope()", () => {
  it("compileScope() treats a missing or empty scope as no limit", () => {
    assert.equal(compileScope(undefined), undefined);
    assert.equal(compileScope({}), undefined);
    assert.equal(compileScope({ roles: [], projects: [], allowPlatformCli: false }), undefined);
  });

  it("compileScope() always lets discovery, selves, access reviews and logout through", () => {
    const scope = compileScope({ clusters: [{ cluster: "c1" }] })!;
    assert.ok(scope(path("get", "/apis"), "p-"));
    assert.ok(scope(path("get", "/apis/management.platform.sh/v1"), "p-"));
    assert.ok(scope(path("get", "/openapi/v3"), "p-"));
    assert.ok(scope(path("post", "/auth/logout"), "p-"));
    assert.ok(scope(request("create", "selves"), "p-"));
    assert.ok(scope(request("create", "selfsubjectaccessreviews"), "p-"));
    assert.equal(scope(path("get", "/metrics"), "p-"), false);
    assert.equal(scope(request("list", "users"), "p-"), false);
  });

  it("compileScope() with role agent allows opening the tunnel of its clusters, and nothing else", () => {
    const scope = compileScope({ roles: [{ role: "agent", clusters: ["c1"] }] })!;
    const tunnel = (name: string) => request("create", "clusters", { name, subresource: "tunnel" });
    assert.ok(scope(tunnel("c1"), "p-"));
    assert.equal(scope(tunnel("c2"), "p-"), false, "another cluster's tunnel");
    assert.equal(scope(request("get", "clusters", { name: "c1" }), "p-"), false);
    assert.equal(scope(request("use", "clusters", { name: "c1" }), "p-"), false, "not kubectl through the platform");
    assert.equal(scope(request("update", "clusters", { name: "c1", subresource: "status" }), "p-"), false);
    assert.equal(scope(request("list", "spaceinstances", { namespace: "p-a" }), "p-"), false);
  });

  it("compileScope() with role virtualcluster allows registering its instance, its status, the config, and nothing else", () => {
    const scope = compileScope({ roles: [{ role: "virtualcluster", projects: ["*"] }] })!;
    const instance = { namespace: "p-team", name: "vc1" };
    assert.ok(scope(request("get", "virtualclusterinstances", instance), "p-"));
    assert.ok(scope(request("update", "virtualclusterinstances", { ...instance, subresource: "status" }), "p-"));
    assert.ok(scope(request("create", "virtualclusterinstances", { namespace: "p-team" }), "p-"), "registers itself");
    assert.ok(scope(request("get", "configs", { name: "config" }), "p-"));
    assert.equal(scope(request("list", "users"), "p-"), false);
    assert.equal(scope(request("get", "users", { name: "bob" }), "p-"), false);
    assert.equal(scope(request("create", "ownedaccesskeys"), "p-"), false);
    assert.equal(scope(request("delete", "virtualclusterinstances", instance), "p-"), false);
    assert.equal(
      scope(request("create", "virtualclusterinstances", { ...instance, subresource: "kubeconfig" }), "p-"),
      false,
    );
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "default", name: "vc1" }), "p-"), false);
  });

  it("compileScope() with role virtualcluster for named projects and clusters stays inside them", () => {
    const scope = compileScope({ roles: [{ role: "virtualcluster", projects: ["a"], virtualClusters: ["vc1"] }] })!;
    assert.ok(scope(request("get", "virtualclusterinstances", { namespace: "p-a", name: "vc1" }), "p-"));
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-a", name: "vc2" }), "p-"), false);
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-b", name: "vc1" }), "p-"), false);
    assert.equal(scope(request("list", "virtualclusterinstances", { namespace: "p-a" }), "p-"), false);
  });

  it("compileScope() reads a role's {project: NAME} items (the schema's other spelling) as the names", () => {
    const scope = compileScope({ roles: [{ role: "virtualcluster", projects: [{ project: "a" }] }] })!;
    assert.ok(scope(request("get", "virtualclusterinstances", { namespace: "p-a", name: "vc1" }), "p-"));
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-b", name: "vc1" }), "p-"), false);
  });

  it('compileScope() with role virtualcluster reads "*" in virtualClusters as every instance, like an empty list', () => {
    for (const virtualClusters of [["*"], []]) {
      const scope = compileScope({ roles: [{ role: "virtualcluster", projects: ["a"], virtualClusters }] })!;
      assert.ok(scope(request("get", "virtualclusterinstances", { namespace: "p-a", name: "any" }), "p-"));
      assert.ok(scope(request("list", "virtualclusterinstances", { namespace: "p-a" }), "p-"));
      assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-b", name: "any" }), "p-"), false);
    }
  });

  it("compileScope() with role platformCLI allows the client's reads and credentials, and no other writes", () => {
    for (const scope of [
      compileScope({ roles: [{ role: "platformCLI" }] })!,
      compileScope({ allowPlatformCli: true })!,
    ]) {
      assert.ok(scope(request("list", "projects"), "p-"));
      assert.ok(scope(request("watch", "virtualclusterinstances", { namespace: "p-a" }), "p-"));
      assert.ok(
        scope(
          request("create", "virtualclusterinstances", { namespace: "p-a", name: "x", subresource: "kubeconfig" }),
          "p-",
        ),
      );
      assert.ok(scope(request("create", "directclusterendpointtokens"), "p-"));
      for (const resource of ["users", "ownedaccesskeys", "teams", "virtualclusterinstances", "projects"]) {
        assert.equal(scope(request("create", resource, { namespace: "p-a" }), "p-"), false, resource);
        assert.equal(scope(request("update", resource, { namespace: "p-a", name: "x" }), "p-"), false, resource);
        assert.equal(scope(request("delete", resource, { namespace: "p-a", name: "x" }), "p-"), false, resource);
      }
      assert.equal(scope(request("list", "users"), "p-"), false);
      assert.equal(scope(request("list", "ownedaccesskeys"), "p-"), false);
    }
  });

  it("compileScope() with projects limits every resource to the project's namespace and object", () => {
    const scope = compileScope({ projects: [{ project: "a" }] })!;
    assert.ok(scope(request("delete", "virtualclusterinstances", { namespace: "p-a", name: "x" }), "p-"));
    assert.ok(scope(request("get", "projects", { name: "a" }), "p-"));
    assert.equal(scope(request("get", "projects", { name: "b" }), "p-"), false);
    assert.equal(scope(request("list", "projects"), "p-"), false);
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-b", name: "x" }), "p-"), false);
    assert.equal(scope(request("list", "virtualclusterinstances"), "p-"), false);
    assert.equal(scope(request("get", "users", { name: "a" }), "p-"), false);
    // The prefix is read per request: a changed prefix moves the project namespaces.
    assert.ok(scope(request("get", "virtualclusterinstances", { namespace: "proj-a", name: "x" }), "proj-"));
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-a", name: "x" }), "proj-"), false);
  });

  it("compileScope() with project * covers every project but nothing outside projects", () => {
    const scope = compileScope({ projects: [{ project: "*" }] })!;
    assert.ok(scope(request("list", "projects"), "p-"));
    assert.ok(scope(request("get", "virtualclusterinstances", { namespace: "p-z", name: "x" }), "p-"));
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "default", name: "x" }), "p-"), false);
    assert.equal(scope(request("list", "users"), "p-"), false);
  });

  it("compileScope() with virtualClusters, spaces and clusters allows just those objects", () => {
    const scope = compileScope({
      virtualClusters: [{ project: "a", virtualCluster: "vc1" }],
      spaces: [{ project: "a", space: "*" }],
      clusters: [{ cluster: "c1" }],
    })!;
    assert.ok(
      scope(
        request("create", "virtualclusterinstances", { namespace: "p-a", name: "vc1", subresource: "kubeconfig" }),
        "p-",
      ),
    );
    assert.equal(scope(request("get", "virtualclusterinstances", { namespace: "p-a", name: "vc2" }), "p-"), false);
    assert.ok(scope(request("list", "spaceinstances", { namespace: "p-a" }), "p-"));
    assert.equal(scope(request("list", "spaceinstances", { namespace: "p-b" }), "p-"), false);
    assert.ok(scope(request("get", "clusters", { name: "c1" }), "p-"));
    assert.equal(scope(request("get", "clusters", { name: "c2" }), "p-"), false);
  });

  it("a project-scoped key never reaches another project's instances (property)", () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
    fc.assert(
      fc.property(
        name,
        name,
        name,
        fc.constantFrom("get", "list", "update", "patch", "delete", "create"),
        (own, other, vc, verb) => {
          fc.pre(own !== other);
          const scope = compileScope({ projects: [{ project: own }] })!;
          return !scope(request(verb, "virtualclusterinstances", { namespace: `p-${other}`, name: vc }), "p-");
        },
      ),
    );
  });
});

describe("projectOf()", () => {
  it("projectOf() reads the project from the namespace prefix or the projects object", () => {
    assert.equal(projectOf(request("get", "virtualclusterinstances", { namespace: "p-a", name: "x" }), "p-"), "a");
    assert.equal(projectOf(request("get", "projects", { name: "a" }), "p-"), "a");
    assert.equal(projectOf(request("list", "projects"), "p-"), "");
    assert.equal(projectOf(request("get", "virtualclusterinstances", { namespace: "p-", name: "x" }), "p-"), undefined);
    assert.equal(projectOf(request("get", "users", { name: "a" }), "p-"), undefined);
  });
});
