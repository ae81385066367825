import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { AuthorizationAttributes, RequestContext } from "../../../registry/types.ts";
import { withGrantChecks } from "./access-checks.ts";
import { userDefinition } from "./user.ts";

/** Every subject exists here: existence (422) is tested against the platform (test/granting-fields.test.ts). */
const anySubject = { exists: async () => true };
const definition = withGrantChecks(userDefinition, anySubject);

describe("User privileged fields", () => {
  let env: TestRegistry;
  let store: GenericStore;
  /** Bob may do anything but escalate and bind (as a user editing itself). */
  const bob = (): RequestContext =>
    testContext({
      user: { name: "bob", groups: [] },
      authorizer: {
        authorize: async (a: AuthorizationAttributes) => ({ allowed: a.verb !== "escalate" && a.verb !== "bind" }),
      },
    });

  before(async () => {
    env = await openTestRegistry([definition]);
    store = env.store(definition);
    await store.create(
      testContext(),
      undefined,
      { apiVersion: "management.platform.sh/v1", kind: "User", metadata: { name: "bob" }, spec: { email: "b@x" } },
      {},
    );
  });
  after(() => env.close());

  it("update() lets a user change its profile fields", async () => {
    const patched = await store.patch(
      bob(),
      { name: "bob" },
      "merge",
      { spec: { displayName: "Bob", email: "bob@x", icon: "i", description: "d" } },
      {},
    );
    assert.equal((patched.object.spec as { email: string }).email, "bob@x");
  });

  it("update() refuses role, group, disabling and token changes without escalate, through PUT and PATCH", async () => {
    for (const spec of [
      { clusterRoles: [{ name: "admin" }] },
      { groups: ["admins"] },
      { disabled: true },
      { tokenGeneration: 7 },
      { username: "root" },
      { subject: "root" },
      { extraClaims: { role: "admin" } },
    ]) {
      const viaPatch = await statusErrorOf(store.patch(bob(), { name: "bob" }, "merge", { spec }, {}));
      assert.equal(viaPatch.code, 403, JSON.stringify(spec));
      assert.match(
        viaPatch.message,
        /User "bob" cannot escalate resource "users" in API group "management.platform.sh"/,
      );
      const current = await store.get(bob(), { name: "bob" });
      const next = { ...current, spec: { ...(current.spec as object), ...spec } };
      assert.equal((await statusErrorOf(store.update(bob(), { name: "bob" }, next, {}))).code, 403);
    }
    const jsonPatch = [{ op: "add", path: "/spec/clusterRoles", value: [{ name: "admin" }] }];
    assert.equal((await statusErrorOf(store.patch(bob(), { name: "bob" }, "json", jsonPatch, {}))).code, 403);
    const stored = await store.get(testContext(), { name: "bob" });
    assert.equal((stored.spec as { clusterRoles?: unknown }).clusterRoles, undefined);
  });

  it("update() needs bind to grant a user access, even for an admin's own edit", async () => {
    const error = await statusErrorOf(
      store.patch(bob(), { name: "bob" }, "merge", { spec: { access: [{ verbs: ["*"], users: ["eve"] }] } }, {}),
    );
    assert.equal(error.code, 403);
  });
});
