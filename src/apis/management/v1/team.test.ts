import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { AuthorizationAttributes, RequestContext } from "../../../registry/types.ts";
import { withGrantChecks } from "./access-checks.ts";
import { teamDefinition } from "./team.ts";

/** Every subject exists here: existence (422) is tested against the platform (test/granting-fields.test.ts). */
const anySubject = { exists: async () => true };
const definition = withGrantChecks(teamDefinition, anySubject);

describeResourceConformance({
  definition,
  sample: (name) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "Team",
    metadata: { name },
    spec: { displayName: "Sample", groups: ["devs"], clusterRoles: [{ name: "viewer" }] },
  }),
  changeSpec: (object) => {
    (object.spec as { displayName: string }).displayName = "Changed";
  },
});

describe("Team", () => {
  let env: TestRegistry;
  let store: GenericStore;
  const asked: string[] = [];
  /** A caller allowed everything except the listed "verb resource/name" questions. */
  const caller = (...denied: string[]): RequestContext =>
    testContext({
      user: { name: "lead", groups: [] },
      authorizer: {
        authorize: async (a: AuthorizationAttributes) => {
          const question = `${a.verb} ${a.resource}/${a.name ?? ""}`;
          asked.push(question);
          return { allowed: !denied.includes(question) };
        },
      },
    });
  const team = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "Team",
    metadata: { name },
    spec,
  });

  before(async () => {
    env = await openTestRegistry([definition]);
    store = env.store(definition);
  });
  after(() => env.close());

  it("create() needs bind on each member and on each user or team granted access", async () => {
    asked.length = 0;
    await store.create(
      caller(),
      undefined,
      team("t1", { users: ["a", "b"], access: [{ verbs: ["get"], teams: ["x"] }] }),
      {},
    );
    assert.deepEqual(asked.sort(), ["bind teams/x", "bind users/a", "bind users/b"]);
    const error = await statusErrorOf(
      store.create(caller("bind users/b"), undefined, team("t2", { users: ["a", "b"] }), {}),
    );
    assert.equal(error.code, 403);
    assert.equal(
      error.message,
      'teams.management.platform.sh "t2" is forbidden: User "lead" cannot bind resource "users" in API group "management.platform.sh" at the cluster scope: granting user "b" rights through spec.users needs it',
    );
  });

  it("update() asks only about what changed: new members, and escalate for groups, roles and access", async () => {
    const created = await store.create(caller(), undefined, team("t3", { users: ["a"] }), {});
    asked.length = 0;
    const withMember = { ...created, spec: { ...(created.spec as object), users: ["a", "c"] } };
    const updated = await store.update(caller(), { name: "t3" }, withMember, {});
    assert.deepEqual(asked, ["bind users/c"]);
    for (const spec of [{ groups: ["admins"] }, { clusterRoles: [{ name: "admin" }] }]) {
      const next = { ...updated, spec: { ...(updated.spec as object), ...spec } };
      const error = await statusErrorOf(store.update(caller("escalate teams/t3"), { name: "t3" }, next, {}));
      assert.equal(error.code, 403, JSON.stringify(spec));
      assert.match(error.message, /cannot escalate resource "teams"/);
    }
  });

  it("update() needs makeowner to change the owner", async () => {
    const created = await store.create(caller(), undefined, team("t4", {}), {});
    const next = { ...created, spec: { ...(created.spec as object), owner: { user: "zoe" } } };
    const error = await statusErrorOf(store.update(caller("makeowner users/zoe"), { name: "t4" }, next, {}));
    assert.equal(error.code, 403);
    assert.match(error.message, /cannot makeowner resource "users".*making user "zoe" the owner needs it/);
  });
});
