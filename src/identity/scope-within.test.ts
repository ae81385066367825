import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { AccessKeyScope } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { AuthorizationAttributes } from "../registry/types.ts";
import { compileScope } from "./scope.ts";
import { scopeExcess } from "./scope-within.ts";

const G = "management.platform.sh";
const fields = (requested: AccessKeyScope, granted: AccessKeyScope) =>
  scopeExcess(requested, granted).map((e) => e.field);

describe("scopeExcess()", () => {
  it("scopeExcess() accepts a narrower project, space or virtual cluster inside a granted project", () => {
    const granted: AccessKeyScope = { projects: [{ project: "a" }] };
    assert.deepEqual(
      fields(
        {
          projects: [{ project: "a" }],
          spaces: [{ project: "a", space: "s" }],
          virtualClusters: [{ project: "a", virtualCluster: "*" }],
        },
        granted,
      ),
      [],
    );
  });

  it("scopeExcess() names every grant that reaches beyond the caller's scope", () => {
    const granted: AccessKeyScope = {
      projects: [{ project: "a" }],
      virtualClusters: [{ project: "b", virtualCluster: "vc1" }],
    };
    assert.deepEqual(
      fields(
        {
          projects: [{ project: "*" }, { project: "b" }],
          virtualClusters: [
            { project: "b", virtualCluster: "vc1" },
            { project: "b", virtualCluster: "*" },
          ],
          clusters: [{ cluster: "c" }],
          allowPlatformCli: true,
        },
        granted,
      ),
      [
        "spec.scope.allowPlatformCli",
        "spec.scope.projects[0]",
        "spec.scope.projects[1]",
        "spec.scope.virtualClusters[1]",
        "spec.scope.clusters[0]",
      ],
    );
  });

  it("scopeExcess() compares the virtualcluster role by projects and names, and platformCLI with allowPlatformCli", () => {
    const granted: AccessKeyScope = {
      roles: [{ role: "virtualcluster", projects: ["a", "b"] }],
      allowPlatformCli: true,
    };
    assert.deepEqual(
      fields(
        {
          roles: [
            { role: "virtualcluster", projects: ["a"], virtualClusters: ["vc1"] },
            { role: "virtualcluster", projects: ["*"] },
            { role: "virtualcluster" },
            { role: "platformCLI" },
          ],
        },
        granted,
      ),
      ["spec.scope.roles[1]", "spec.scope.roles[2]"],
    );
  });

  it("scopeExcess() compares a role's {project: NAME} items as the names", () => {
    const granted: AccessKeyScope = { roles: [{ role: "virtualcluster", projects: [{ project: "a" }] }] };
    assert.deepEqual(fields({ roles: [{ role: "virtualcluster", projects: ["a"] }] }, granted), []);
    assert.deepEqual(fields({ roles: [{ role: "virtualcluster", projects: [{ project: "b" }] }] }, granted), [
      "spec.scope.roles[0]",
    ]);
  });

  it("scopeExcess() accepts deprecated rules only when the caller has the very same rule", () => {
    const rule = { verbs: ["get"], resources: [{ group: G, resources: ["users"] }] };
    assert.deepEqual(fields({ rules: [rule] }, { rules: [structuredClone(rule)] }), []);
    assert.deepEqual(fields({ rules: [{ ...rule, verbs: ["get", "list"] }] }, { rules: [rule] }), [
      "spec.scope.rules[0]",
    ]);
  });

  // The property that matters: whatever the checker accepts, the requested scope lets through no request the
  // caller's scope would refuse.
  it("scopeExcess() never accepts a scope that lets through a request the caller's scope refuses", () => {
    const name = fc.constantFrom("a", "b", "*");
    const scopeArb: fc.Arbitrary<AccessKeyScope> = fc.record(
      {
        roles: fc.array(
          fc.record(
            {
              role: fc.constantFrom("virtualcluster", "platformCLI", "agent", "other"),
              projects: fc.array(name, { maxLength: 2 }),
              virtualClusters: fc.array(name, { maxLength: 2 }),
              clusters: fc.array(name, { maxLength: 2 }),
            },
            { requiredKeys: ["role"] },
          ),
          { maxLength: 2 },
        ),
        projects: fc.array(fc.record({ project: name }), { maxLength: 2 }),
        spaces: fc.array(fc.record({ project: name, space: name }), { maxLength: 2 }),
        virtualClusters: fc.array(fc.record({ project: name, virtualCluster: name }), { maxLength: 2 }),
        clusters: fc.array(fc.record({ cluster: name }), { maxLength: 2 }),
        allowPlatformCli: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    const requestArb: fc.Arbitrary<AuthorizationAttributes> = fc
      .record({
        verb: fc.constantFrom("get", "list", "create", "update", "delete"),
        resource: fc.constantFrom(
          "virtualclusterinstances",
          "spaceinstances",
          "projects",
          "clusters",
          "configs",
          "users",
        ),
        namespace: fc.constantFrom(undefined, "p-a", "p-b", "other"),
        name: fc.constantFrom(undefined, "a", "b", "vc1"),
        subresource: fc.constantFrom(undefined, "status", "kubeconfig", "tunnel"),
      })
      .map((r) => ({
        user: { name: "u", groups: [] },
        group: G,
        version: "v1",
        resourceRequest: true,
        verb: r.verb,
        resource: r.resource,
        ...(r.namespace ? { namespace: r.namespace } : {}),
        ...(r.name ? { name: r.name } : {}),
        ...(r.subresource ? { subresource: r.subresource } : {}),
      }));
    fc.assert(
      fc.property(
        scopeArb,
        scopeArb,
        fc.array(requestArb, { minLength: 1, maxLength: 20 }),
        (requested, granted, requests) => {
          const want = compileScope(requested);
          const have = compileScope(granted);
          if (!want || !have || scopeExcess(requested, granted).length > 0) return true;
          return requests.every((request) => !want(request, "p-") || have(request, "p-"));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
