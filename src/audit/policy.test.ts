import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { AuditPolicy, AuditPolicyRule } from "../config/types.ts";
import { type AuditAttributes, evaluateAuditPolicy, ruleMatches } from "./policy.ts";
import type { AuditRequestInfo } from "./types.ts";

const G = "management.platform.sh";

function resource(verb: string, resource: string, extra: Partial<AuditRequestInfo> = {}): AuditRequestInfo {
  return {
    resourceRequest: true,
    verb,
    path: `/apis/${G}/v1/${resource}`,
    group: G,
    version: "v1",
    namespace: "",
    resource,
    name: "",
    subresource: "",
    ...extra,
  };
}

function nonResource(path: string, verb = "get"): AuditRequestInfo {
  return {
    resourceRequest: false,
    verb,
    path,
    group: "",
    version: "",
    namespace: "",
    resource: "",
    name: "",
    subresource: "",
  };
}

const admin = { name: "admin", groups: ["system:authenticated", "admins"] };
const alice = { name: "alice", groups: ["system:authenticated"] };
const at = (info: AuditRequestInfo, user = admin): AuditAttributes => ({ user, info });

describe("ruleMatches()", () => {
  const cases: [string, AuditPolicyRule, AuditAttributes, boolean][] = [
    ["an empty rule matches everything", { level: "Metadata" }, at(nonResource("/healthz")), true],
    ["users match by name", { level: "Metadata", users: ["alice"] }, at(resource("get", "users"), alice), true],
    ["users skip others", { level: "Metadata", users: ["alice"] }, at(resource("get", "users")), false],
    [
      "userGroups match any group",
      { level: "Metadata", userGroups: ["admins", "x"] },
      at(resource("get", "users")),
      true,
    ],
    [
      "userGroups skip outsiders",
      { level: "Metadata", userGroups: ["admins"] },
      at(resource("get", "users"), alice),
      false,
    ],
    ["verbs match", { level: "Metadata", verbs: ["list", "watch"] }, at(resource("list", "users")), true],
    ["verbs skip others", { level: "Metadata", verbs: ["delete"] }, at(resource("list", "users")), false],
    [
      "resources match group and resource",
      { level: "Metadata", resources: [{ group: G, resources: ["users"] }] },
      at(resource("get", "users")),
      true,
    ],
    [
      "resources need the same group",
      { level: "Metadata", resources: [{ group: "", resources: ["users"] }] },
      at(resource("get", "users")),
      false,
    ],
    [
      "an empty resources list in a group matches all of it",
      { level: "Metadata", resources: [{ group: G }] },
      at(resource("get", "teams")),
      true,
    ],
    [
      "resource/subresource matches exactly",
      { level: "Metadata", resources: [{ group: G, resources: ["users/password"] }] },
      at(resource("create", "users", { subresource: "password", name: "a" })),
      true,
    ],
    [
      "a plain resource does not match its subresource",
      { level: "Metadata", resources: [{ group: G, resources: ["users"] }] },
      at(resource("create", "users", { subresource: "password", name: "a" })),
      false,
    ],
    [
      "* matches resources and subresources",
      { level: "Metadata", resources: [{ group: G, resources: ["*"] }] },
      at(resource("get", "users", { subresource: "status", name: "a" })),
      true,
    ],
    [
      "resource/* matches its subresources",
      { level: "Metadata", resources: [{ group: G, resources: ["users/*"] }] },
      at(resource("get", "users", { subresource: "accesskeys", name: "a" })),
      true,
    ],
    [
      "*/sub matches that subresource of any resource",
      { level: "Metadata", resources: [{ group: G, resources: ["*/status"] }] },
      at(resource("update", "projects", { subresource: "status", name: "a" })),
      true,
    ],
    [
      "*/sub does not match the main resource",
      { level: "Metadata", resources: [{ group: G, resources: ["*/status"] }] },
      at(resource("update", "projects", { name: "a" })),
      false,
    ],
    [
      "resourceNames match the name",
      { level: "Metadata", resources: [{ group: G, resources: ["users"], resourceNames: ["alice"] }] },
      at(resource("get", "users", { name: "alice" })),
      true,
    ],
    [
      "resourceNames skip other names",
      { level: "Metadata", resources: [{ group: G, resources: ["users"], resourceNames: ["alice"] }] },
      at(resource("get", "users", { name: "bob" })),
      false,
    ],
    [
      'namespaces "" matches cluster-scoped resources',
      { level: "Metadata", namespaces: [""] },
      at(resource("get", "users")),
      true,
    ],
    [
      "namespaces skip other namespaces",
      { level: "Metadata", namespaces: ["p-a"] },
      at(resource("get", "virtualclusterinstances", { namespace: "p-b" })),
      false,
    ],
    [
      "namespaces never match non-resource requests",
      { level: "Metadata", namespaces: [""] },
      at(nonResource("/version")),
      false,
    ],
    [
      "nonResourceURLs match exactly",
      { level: "Metadata", nonResourceURLs: ["/version"] },
      at(nonResource("/version")),
      true,
    ],
    [
      "nonResourceURLs match a prefix with *",
      { level: "Metadata", nonResourceURLs: ["/healthz*"] },
      at(nonResource("/healthz/ping")),
      true,
    ],
    [
      "nonResourceURLs * matches every path",
      { level: "Metadata", nonResourceURLs: ["*"] },
      at(nonResource("/openapi/v3")),
      true,
    ],
    [
      "nonResourceURLs never match resource requests",
      { level: "Metadata", nonResourceURLs: ["*"] },
      at(resource("get", "users")),
      false,
    ],
    [
      "requestTargets Management matches",
      { level: "Metadata", requestTargets: ["Management"] },
      at(resource("get", "users")),
      true,
    ],
    [
      "requestTargets without Management skip",
      { level: "Metadata", requestTargets: ["Cluster", "VirtualCluster"] },
      at(resource("get", "users")),
      false,
    ],
    [
      "clusters skip every management request",
      { level: "Metadata", clusters: ["c1"] },
      at(resource("get", "users")),
      false,
    ],
  ];
  for (const [name, rule, attributes, expected] of cases) {
    it(`ruleMatches(): ${name}`, () => {
      assert.equal(ruleMatches(rule, attributes), expected);
    });
  }
});

describe("evaluateAuditPolicy()", () => {
  it("evaluateAuditPolicy() picks the first matching rule", () => {
    const policy: AuditPolicy = {
      rules: [
        { level: "None", users: ["system:anonymous"] },
        { level: "RequestResponse", resources: [{ group: G, resources: ["configs"] }] },
        { level: "Metadata" },
      ],
    };
    assert.equal(evaluateAuditPolicy(policy, at(resource("get", "configs"))).level, "RequestResponse");
    assert.equal(evaluateAuditPolicy(policy, at(resource("get", "users"))).level, "Metadata");
    assert.equal(
      evaluateAuditPolicy(policy, at(resource("get", "configs"), { name: "system:anonymous", groups: [] })).level,
      "None",
    );
  });

  it("evaluateAuditPolicy() answers None when no rule matches", () => {
    assert.equal(evaluateAuditPolicy({}, at(resource("get", "users"))).level, "None");
    assert.equal(
      evaluateAuditPolicy({ rules: [{ level: "Request", verbs: ["create"] }] }, at(resource("get", "users"))).level,
      "None",
    );
  });

  it("evaluateAuditPolicy() omits the union of the policy's and the rule's stages", () => {
    const decision = evaluateAuditPolicy(
      { omitStages: ["RequestReceived"], rules: [{ level: "Metadata", omitStages: ["ResponseStarted"] }] },
      at(resource("watch", "users")),
    );
    assert.deepEqual([...decision.omitStages].sort(), ["RequestReceived", "ResponseStarted"]);
  });

  const levels = fc.constantFrom("None", "Metadata", "Request", "RequestResponse") as fc.Arbitrary<
    AuditPolicyRule["level"]
  >;
  const names = fc.constantFrom("admin", "alice", "bob");
  const verbs = fc.constantFrom("get", "list", "watch", "create", "update", "patch", "delete");
  const plurals = fc.constantFrom("users", "teams", "configs", "projects");
  const rule: fc.Arbitrary<AuditPolicyRule> = fc.record(
    {
      level: levels,
      users: fc.array(names, { maxLength: 2 }),
      verbs: fc.array(verbs, { maxLength: 3 }),
      resources: fc.array(
        fc.record({ group: fc.constantFrom(G, ""), resources: fc.array(plurals, { maxLength: 2 }) }),
        {
          maxLength: 2,
        },
      ),
    },
    { requiredKeys: ["level"] },
  );
  const request = fc.record({ user: names, verb: verbs, plural: plurals });

  it("evaluateAuditPolicy() gives the level of the first rule that matches, for any policy and request", () => {
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 6 }), request, (rules, r) => {
        const attributes = at(resource(r.verb, r.plural), { name: r.user, groups: ["system:authenticated"] });
        const first = rules.find((candidate) => ruleMatches(candidate, attributes));
        assert.equal(evaluateAuditPolicy({ rules }, attributes).level, first?.level ?? "None");
      }),
      { numRuns: 500 },
    );
  });

  it("evaluateAuditPolicy() is unaffected by rules after a catch-all", () => {
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 4 }),
        levels,
        fc.array(rule, { maxLength: 4 }),
        request,
        (head, level, tail, r) => {
          const attributes = at(resource(r.verb, r.plural), { name: r.user, groups: [] });
          const withTail = evaluateAuditPolicy({ rules: [...head, { level }, ...tail] }, attributes).level;
          const without = evaluateAuditPolicy({ rules: [...head, { level }] }, attributes).level;
          assert.equal(withTail, without);
        },
      ),
    );
  });
});
