import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clusterRoleDefinition } from "../apis/rbac/v1/clusterrole.ts";
import { clusterRoleBindingDefinition } from "../apis/rbac/v1/clusterrolebinding.ts";
import type { PolicyRule } from "../apis/rbac/v1/common.ts";
import { roleDefinition } from "../apis/rbac/v1/role.ts";
import { roleBindingDefinition } from "../apis/rbac/v1/rolebinding.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../registry/testing.ts";
import type { RequestContext, ResourceDefinition } from "../registry/types.ts";
import { RbacAuthorizer } from "./rbac/rbac-authorizer.ts";
import { RbacIndex } from "./rbac/rbac-index.ts";
import { withEscalationChecks } from "./rbac-escalation.ts";

const API = "rbac.authorization.k8s.io/v1";
const REF = { apiGroup: "rbac.authorization.k8s.io" };

describe("withEscalationChecks()", () => {
  let env: TestRegistry;
  let informer: StoreInformer;
  let asAlice: RequestContext;
  const index = new RbacIndex();
  const defs = [roleDefinition, clusterRoleDefinition, roleBindingDefinition, clusterRoleBindingDefinition].map((d) =>
    withEscalationChecks(d, (kind, name, ns) => index.roleRules(kind, name, ns)),
  );
  const [ROLES, CLUSTER_ROLES, ROLE_BINDINGS] = defs;
  const write = (
    context: RequestContext,
    definition: ResourceDefinition,
    object: Record<string, unknown>,
    ns?: string,
  ) => env.store(definition).create(context, ns, { apiVersion: API, kind: definition.kind, ...object }, {});
  const role = (name: string, rules: PolicyRule[]) => ({ metadata: { name, namespace: "team" }, rules });
  const binding = (name: string, kind: string, roleName: string) => ({
    metadata: { name, namespace: "team" },
    roleRef: { ...REF, kind, name: roleName },
    subjects: [{ kind: "User", name: "bob" }],
  });

  before(async () => {
    env = await openTestRegistry(defs);
    informer = new StoreInformer(env.registry.storage, index);
    await informer.start();
    const authorizer = new RbacAuthorizer(index, () => informer.fresh());
    asAlice = testContext({ user: { name: "alice", groups: [] }, authorizer });
    const admin = testContext();
    await write(admin, CLUSTER_ROLES, {
      metadata: { name: "svc-viewer" },
      rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get"] }],
    });
    await write(admin, CLUSTER_ROLES, {
      metadata: { name: "everything" },
      rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
    });
    await write(
      admin,
      ROLES,
      role("team-admin", [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles", "rolebindings"], verbs: ["create", "update"] },
        { apiGroups: [""], resources: ["services"], verbs: ["get"] },
      ]),
      "team",
    );
    await write(
      admin,
      ROLE_BINDINGS,
      { ...binding("alice-admin", "Role", "team-admin"), subjects: [{ kind: "User", name: "alice" }] },
      "team",
    );
  });
  after(async () => {
    informer.stop();
    await env.close();
  });

  it("a Role may grant only what its author holds", async () => {
    await write(
      asAlice,
      ROLES,
      role("svc-get", [{ apiGroups: [""], resources: ["services"], verbs: ["get"] }]),
      "team",
    );
    const error = await statusErrorOf(
      write(
        asAlice,
        ROLES,
        role("secrets", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }]),
        "team",
      ),
    );
    assert.equal(error.code, 403);
    assert.equal(
      error.message,
      'roles.rbac.authorization.k8s.io "secrets" is forbidden: user "alice" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get", "list"]}',
    );
  });

  it("a binding may name only a role whose permissions its author holds, unless it may bind that role", async () => {
    await write(asAlice, ROLE_BINDINGS, binding("bob-views", "ClusterRole", "svc-viewer"), "team");
    const error = await statusErrorOf(
      write(asAlice, ROLE_BINDINGS, binding("bob-all", "ClusterRole", "everything"), "team"),
    );
    assert.equal(error.code, 403);
    assert.match(error.message, /attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\]/);
    await write(
      testContext(),
      ROLES,
      role("binder", [
        {
          apiGroups: ["rbac.authorization.k8s.io"],
          resources: ["clusterroles"],
          resourceNames: ["everything"],
          verbs: ["bind"],
        },
      ]),
      "team",
    );
    await write(
      testContext(),
      ROLE_BINDINGS,
      { ...binding("alice-binds", "Role", "binder"), subjects: [{ kind: "User", name: "alice" }] },
      "team",
    );
    await write(asAlice, ROLE_BINDINGS, binding("bob-all", "ClusterRole", "everything"), "team");
  });

  it("binding a role that does not exist needs bind", async () => {
    const error = await statusErrorOf(
      write(asAlice, ROLE_BINDINGS, binding("ghost", "ClusterRole", "nonexistent"), "team"),
    );
    assert.equal(error.code, 403);
    assert.match(error.message, /"nonexistent" not found/);
  });
});
