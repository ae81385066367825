import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clusterRoleDefinition } from "../../apis/rbac/v1/clusterrole.ts";
import { clusterRoleBindingDefinition } from "../../apis/rbac/v1/clusterrolebinding.ts";
import type { PolicyRule, Subject } from "../../apis/rbac/v1/common.ts";
import { roleDefinition } from "../../apis/rbac/v1/role.ts";
import { roleBindingDefinition } from "../../apis/rbac/v1/rolebinding.ts";
import { StoreInformer } from "../../auth/store-informer.ts";
import { openTestRegistry, type TestRegistry, testContext } from "../../registry/testing.ts";
import type { AuthorizationAttributes, ResourceDefinition, UserInfo } from "../../registry/types.ts";
import { RbacAuthorizer } from "./rbac-authorizer.ts";
import { RbacIndex } from "./rbac-index.ts";

const API = "rbac.authorization.k8s.io/v1";
const defs = [roleDefinition, clusterRoleDefinition, roleBindingDefinition, clusterRoleBindingDefinition].map((d) => d);
const [ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS] = defs;

const alice: UserInfo = { name: "alice", groups: ["devs"] };
const robot: UserInfo = { name: "system:serviceaccount:apps:robot", groups: ["system:serviceaccounts"] };

const resource = (user: UserInfo, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}) =>
  ({ user, verb, resource, group: "", resourceRequest: true, ...extra }) as AuthorizationAttributes;
const path = (user: UserInfo, verb: string, p: string): AuthorizationAttributes => ({
  user,
  verb,
  path: p,
  resourceRequest: false,
});

describe("RbacAuthorizer", () => {
  let env: TestRegistry;
  let informer: StoreInformer;
  let authorizer: RbacAuthorizer;
  const allowed = async (attributes: AuthorizationAttributes) => (await authorizer.authorize(attributes)).allowed;
  const create = (definition: ResourceDefinition, object: Record<string, unknown>, namespace?: string) =>
    env.store(definition).create(testContext(), namespace, { apiVersion: API, kind: definition.kind, ...object }, {});
  const role = (name: string, rules: PolicyRule[], namespace?: string) =>
    create(namespace ? ROLES : CLUSTER_ROLES, { metadata: { name, namespace }, rules }, namespace);
  const bind = (name: string, kind: string, roleName: string, subjects: Subject[], namespace?: string) =>
    create(
      namespace ? ROLE_BINDINGS : CLUSTER_ROLE_BINDINGS,
      {
        metadata: { name, namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: roleName },
        subjects,
      },
      namespace,
    );

  before(async () => {
    env = await openTestRegistry(defs);
    const index = new RbacIndex();
    informer = new StoreInformer(env.registry.storage, index);
    await informer.start();
    authorizer = new RbacAuthorizer(index, () => informer.fresh());
  });
  after(async () => {
    informer.stop();
    await env.close();
  });

  it("authorize() lets system:masters do anything and denies everyone else without bindings", async () => {
    assert.equal(await allowed(resource({ name: "root", groups: ["system:masters"] }, "delete", "namespaces")), true);
    assert.equal(await allowed(resource(alice, "get", "services", { namespace: "default" })), false);
  });

  it("a RoleBinding grants its ClusterRole in its namespace only, and at once", async () => {
    await role("svc-reader", [{ apiGroups: [""], resources: ["services"], verbs: ["get", "list"] }]);
    await bind("alice-reads", "ClusterRole", "svc-reader", [{ kind: "User", name: "alice" }], "shop");
    assert.equal(await allowed(resource(alice, "list", "services", { namespace: "shop" })), true);
    assert.equal(await allowed(resource(alice, "list", "services", { namespace: "other" })), false);
    assert.equal(await allowed(resource(alice, "list", "services")), false, "not at cluster scope");
    assert.equal(await allowed(resource(alice, "delete", "services", { namespace: "shop" })), false);
  });

  it("a RoleBinding to a Role of its namespace, for a group", async () => {
    await role("cm-writer", [{ apiGroups: [""], resources: ["configmaps"], verbs: ["*"] }], "team");
    await bind("devs-write", "Role", "cm-writer", [{ kind: "Group", name: "devs" }], "team");
    assert.equal(await allowed(resource(alice, "deletecollection", "configmaps", { namespace: "team" })), true);
    assert.equal(await allowed(resource(alice, "get", "configmaps", { namespace: "shop" })), false);
  });

  it("a ClusterRoleBinding grants everywhere; a service account matches by namespace and name", async () => {
    await role("ep-watcher", [{ apiGroups: ["*"], resources: ["endpoints"], verbs: ["watch"] }]);
    await bind("robot-watches", "ClusterRole", "ep-watcher", [
      { kind: "ServiceAccount", name: "robot", namespace: "apps" },
    ]);
    assert.equal(await allowed(resource(robot, "watch", "endpoints", { namespace: "anywhere" })), true);
    assert.equal(await allowed(resource(robot, "watch", "endpoints")), true);
    const impostor = { name: "system:serviceaccount:other:robot", groups: [] };
    assert.equal(await allowed(resource(impostor, "watch", "endpoints")), false);
  });

  it("a RoleBinding's service account without a namespace is the binding's own", async () => {
    await role("secret-reader", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]);
    await bind("robot-secrets", "ClusterRole", "secret-reader", [{ kind: "ServiceAccount", name: "robot" }], "apps");
    assert.equal(await allowed(resource(robot, "get", "secrets", { namespace: "apps" })), true);
  });

  it("resourceNames restrict to named objects; a list never matches them", async () => {
    await role("one-secret", [
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["api-key"], verbs: ["get", "list"] },
    ]);
    await bind("alice-one-secret", "ClusterRole", "one-secret", [{ kind: "User", name: "alice" }], "vault");
    assert.equal(await allowed(resource(alice, "get", "secrets", { namespace: "vault", name: "api-key" })), true);
    assert.equal(await allowed(resource(alice, "get", "secrets", { namespace: "vault", name: "other" })), false);
    assert.equal(await allowed(resource(alice, "list", "secrets", { namespace: "vault" })), false);
  });

  it("subresources need res/sub or */sub", async () => {
    await role("status-writer", [
      { apiGroups: [""], resources: ["services/status"], verbs: ["update"] },
      { apiGroups: [""], resources: ["*/scale"], verbs: ["get"] },
    ]);
    await bind("alice-status", "ClusterRole", "status-writer", [{ kind: "User", name: "alice" }]);
    assert.equal(await allowed(resource(alice, "update", "services", { subresource: "status", namespace: "x" })), true);
    assert.equal(await allowed(resource(alice, "update", "services", { namespace: "x" })), false);
    assert.equal(await allowed(resource(alice, "get", "things", { subresource: "scale", namespace: "x" })), true);
  });

  it("non-resource URLs are granted by ClusterRoleBindings, exactly or by a final *", async () => {
    await role("probes", [{ nonResourceURLs: ["/healthz", "/apis/*"], verbs: ["get"] }]);
    await bind("authenticated-probes", "ClusterRole", "probes", [{ kind: "Group", name: "system:authenticated" }]);
    const bob = { name: "bob", groups: [] };
    assert.equal(
      await allowed(path(bob, "get", "/healthz")),
      true,
      "every authenticated user is in system:authenticated",
    );
    assert.equal(await allowed(path(bob, "get", "/apis/rbac.authorization.k8s.io/v1")), true);
    assert.equal(await allowed(path(bob, "post", "/healthz")), false);
    assert.equal(await allowed(path(bob, "get", "/metrics")), false);
    const anonymous = { name: "system:anonymous", groups: ["system:unauthenticated"] };
    assert.equal(await allowed(path(anonymous, "get", "/healthz")), false);
  });

  it("rulesFor() lists the rules bound to the user in a namespace, each one allowed by authorize()", async () => {
    const dana = { name: "dana", groups: ["auditors"] };
    await role("dana-cluster", [
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] },
      { nonResourceURLs: ["/logs/*"], verbs: ["get"] },
    ]);
    await bind("dana-cluster", "ClusterRole", "dana-cluster", [{ kind: "Group", name: "auditors" }]);
    await role("dana-ns", [{ apiGroups: [""], resources: ["secrets"], resourceNames: ["tls"], verbs: ["get"] }], "ops");
    await role("dana-urls", [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
    await bind("dana-ns", "Role", "dana-ns", [{ kind: "User", name: "dana" }], "ops");
    // A RoleBinding never grants non-resource URLs, so rulesFor() leaves them out too.
    await bind("dana-urls", "ClusterRole", "dana-urls", [{ kind: "User", name: "dana" }], "ops");
    const inOps = await authorizer.rulesFor(dana, "ops");
    assert.deepEqual(
      inOps.resourceRules
        .filter((r) => ["namespaces", "secrets"].includes(r.resources[0]))
        .sort((a, b) => a.resources[0].localeCompare(b.resources[0])),
      [
        { verbs: ["get", "list"], apiGroups: [""], resources: ["namespaces"] },
        { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["tls"] },
      ],
    );
    const urls = inOps.nonResourceRules.flatMap((r) => r.nonResourceURLs);
    assert.ok(urls.includes("/logs/*"), JSON.stringify(urls));
    assert.ok(urls.includes("/healthz"), "system:authenticated's rules count too");
    assert.equal(urls.includes("/metrics"), false);
    assert.equal(inOps.incomplete, false);
    assert.equal(await allowed(path(dana, "get", "/metrics")), false);
    assert.equal(await allowed(path(dana, "get", "/logs/x")), true);
    assert.equal(await allowed(resource(dana, "get", "secrets", { namespace: "ops", name: "tls" })), true);
    const elsewhere = await authorizer.rulesFor(dana, "default");
    assert.equal(
      elsewhere.resourceRules.some((r) => r.resources.includes("secrets")),
      false,
      "a RoleBinding counts in its namespace only",
    );
    assert.equal(await allowed(resource(dana, "get", "secrets", { namespace: "default", name: "tls" })), false);
  });

  it("rulesFor() gives system:masters every resource and URL", async () => {
    const root = { name: "root", groups: ["system:masters"] };
    assert.deepEqual(await authorizer.rulesFor(root, "default"), {
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      incomplete: false,
    });
  });

  it("deleting a binding revokes what it granted", async () => {
    await role("ns-reader", [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }]);
    await bind("carol-ns", "ClusterRole", "ns-reader", [{ kind: "User", name: "carol" }]);
    const carol = { name: "carol", groups: [] };
    assert.equal(await allowed(resource(carol, "get", "namespaces", { name: "x" })), true);
    await env.store(CLUSTER_ROLE_BINDINGS).delete(testContext(), { name: "carol-ns" }, {});
    assert.equal(await allowed(resource(carol, "get", "namespaces", { name: "x" })), false);
  });
});
