import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AuthorizationAttributes } from "../registry/types.ts";
import { ruleMatches } from "./scope-rules.ts";

const user = { name: "bob", groups: [] };
const resource = (
  verb: string,
  res: string,
  extra: Partial<AuthorizationAttributes> = {},
): AuthorizationAttributes => ({
  user,
  verb,
  group: "management.platform.sh",
  resource: res,
  resourceRequest: true,
  ...extra,
});

describe("ruleMatches()", () => {
  it("ruleMatches() with an empty rule matches every management request", () => {
    assert.ok(ruleMatches({}, resource("delete", "users", { name: "x" })));
    assert.ok(ruleMatches({}, { user, verb: "get", path: "/version", resourceRequest: false }));
  });

  it("ruleMatches() checks verbs, groups, resources with subresource wildcards and names", () => {
    const rule = {
      verbs: ["get", "create"],
      resources: [
        { group: "management.platform.sh", resources: ["virtualclusterinstances/*", "users"], resourceNames: ["a"] },
      ],
    };
    assert.ok(ruleMatches(rule, resource("get", "users", { name: "a" })));
    assert.equal(ruleMatches(rule, resource("get", "users", { name: "b" })), false);
    assert.equal(ruleMatches(rule, resource("get", "users")), false);
    assert.equal(ruleMatches(rule, resource("delete", "users", { name: "a" })), false);
    assert.ok(
      ruleMatches(rule, resource("create", "virtualclusterinstances", { name: "a", subresource: "kubeconfig" })),
    );
    assert.equal(ruleMatches(rule, resource("get", "virtualclusterinstances", { name: "a" })), false);
    assert.equal(ruleMatches(rule, resource("get", "users", { name: "a", group: "other" })), false);
    assert.ok(
      ruleMatches(
        { resources: [{ group: "management.platform.sh", resources: ["*/status"] }] },
        resource("get", "x", { subresource: "status" }),
      ),
    );
  });

  it('ruleMatches() treats namespace "" as cluster-scoped and an empty list as every namespace', () => {
    assert.ok(ruleMatches({ namespaces: [""] }, resource("get", "users", { name: "a" })));
    assert.equal(ruleMatches({ namespaces: [""] }, resource("get", "vcs", { namespace: "p-a" })), false);
    assert.ok(ruleMatches({ namespaces: ["p-a"] }, resource("get", "vcs", { namespace: "p-a" })));
  });

  it("ruleMatches() matches non-resource URLs with a final wildcard step only", () => {
    const rule = { nonResourceURLs: ["/version", "/apis/*"] };
    assert.ok(ruleMatches(rule, { user, verb: "get", path: "/version", resourceRequest: false }));
    assert.ok(ruleMatches(rule, { user, verb: "get", path: "/apis/x/v1", resourceRequest: false }));
    assert.equal(ruleMatches(rule, { user, verb: "get", path: "/metrics", resourceRequest: false }), false);
    assert.equal(ruleMatches(rule, resource("get", "users")), false);
  });

  it("ruleMatches() never matches with a cluster, virtual clusters or other request targets", () => {
    assert.equal(ruleMatches({ cluster: "c1" }, resource("get", "users")), false);
    assert.equal(ruleMatches({ virtualClusters: [{ name: "x" }] }, resource("get", "users")), false);
    assert.equal(ruleMatches({ requestTargets: ["Cluster"] }, resource("get", "users")), false);
    assert.ok(ruleMatches({ requestTargets: ["Management"] }, resource("get", "users")));
  });
});
