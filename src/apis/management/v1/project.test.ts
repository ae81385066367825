import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { AuthorizationAttributes, RequestContext } from "../../../registry/types.ts";
import { withGrantChecks } from "./access-checks.ts";
import { createProjectDefinition, projectOfNamespace } from "./project.ts";
import { PROJECT_FINALIZER } from "./project-schema.ts";

const prefix = () => "p-";

describeResourceConformance({
  definition: createProjectDefinition({ namespacePrefix: prefix }),
  sample: (name) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "Project",
    metadata: { name },
    spec: { displayName: "Sample", members: [{ kind: "User", name: "bob", clusterRole: "edit" }] },
  }),
  changeSpec: (object) => {
    (object.spec as { displayName: string }).displayName = "Changed";
  },
});

describe("Project", () => {
  let env: TestRegistry;
  let store: GenericStore;
  const counts: Record<string, number> = {};
  const asked: string[] = [];
  const definition = withGrantChecks(
    createProjectDefinition({
      namespacePrefix: prefix,
      instances: { count: async (namespace) => counts[namespace] ?? 0 },
    }),
    { exists: async () => true }, // existence (422) is tested against the platform (test/granting-fields.test.ts)
  );
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
  const project = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "Project",
    metadata: { name },
    spec,
  });

  before(async () => {
    env = await openTestRegistry([definition]);
    store = env.store(definition);
  });
  after(() => env.close());

  it("create() defaults member kind and role, holds deletion with the finalizer and starts Active", async () => {
    const created = await store.create(testContext(), undefined, project("team-a", { members: [{ name: "bob" }] }), {});
    assert.deepEqual((created.spec as { members: unknown[] }).members, [
      { kind: "User", name: "bob", clusterRole: "view" },
    ]);
    assert.deepEqual(created.metadata.finalizers, [PROJECT_FINALIZER]);
    assert.deepEqual(created.status, { phase: "Active" });
  });

  it("create() refuses names that make no valid namespace, and duplicate members", async () => {
    const dotted = await statusErrorOf(store.create(testContext(), undefined, project("a.b"), {}));
    assert.equal(dotted.code, 422);
    assert.match(dotted.message, /metadata\.name: Invalid value: "a\.b": must not contain dots/);
    const long = "x".repeat(62);
    const tooLong = await statusErrorOf(store.create(testContext(), undefined, project(long), {}));
    assert.match(tooLong.message, /the project's namespace "p-x+" must be no more than 63 characters/);
    const twice = await statusErrorOf(
      store.create(
        testContext(),
        undefined,
        project("dup", { members: [{ name: "a" }, { name: "a", clusterRole: "admin" }] }),
        {},
      ),
    );
    assert.equal(twice.code, 422);
    assert.match(twice.message, /spec\.members\[1\]: Duplicate value: "User\/a"/);
    const role = await statusErrorOf(
      store.create(testContext(), undefined, project("role", { members: [{ name: "a", clusterRole: "owner" }] }), {}),
    );
    assert.match(role.message, /spec\.members\[0\]\.clusterRole: Unsupported value: "owner"/);
  });

  it("update() puts a removed finalizer back unless the project is being deleted", async () => {
    const created = await store.create(testContext(), undefined, project("keep"), {});
    const stripped = { ...created, metadata: { ...created.metadata, finalizers: [] } };
    const updated = await store.update(testContext(), { name: "keep" }, stripped, {});
    assert.deepEqual(updated.metadata.finalizers, [PROJECT_FINALIZER]);
  });

  it("delete() with instances left warns and stays pending; without, the finalizer still holds it", async () => {
    await store.create(testContext(), undefined, project("busy"), {});
    counts["p-busy"] = 2;
    const context = testContext();
    const result = await store.delete(context, { name: "busy" }, {});
    assert.equal(result.removed, false);
    assert.ok(result.object.metadata.deletionTimestamp);
    assert.deepEqual(context.warnings, [
      'project "busy" still has 2 virtual cluster instances in namespace "p-busy": it is marked for deletion and goes away once they are deleted',
    ]);
    await store.create(testContext(), undefined, project("idle"), {});
    const quiet = testContext();
    const idle = await store.delete(quiet, { name: "idle" }, {});
    assert.equal(idle.removed, false);
    assert.deepEqual(quiet.warnings, []);
  });

  it("create() and update() need makeowner for a new owner, bind for a new member, escalate for allowedClusters", async () => {
    asked.length = 0;
    const denied = await statusErrorOf(
      store.create(caller("makeowner users/zoe"), undefined, project("owned", { owner: { user: "zoe" } }), {}),
    );
    assert.equal(denied.code, 403);
    assert.match(denied.message, /cannot makeowner resource "users".*making user "zoe" the owner needs it/);
    const created = await store.create(caller(), undefined, project("clusters", { displayName: "x" }), {});
    const next = { ...created, spec: { ...(created.spec as object), allowedClusters: [{ name: "prod" }] } };
    const error = await statusErrorOf(
      store.update(caller("escalate projects/clusters"), { name: "clusters" }, next, {}),
    );
    assert.equal(error.code, 403);
    assert.match(error.message, /cannot escalate resource "projects".*changing spec\.allowedClusters needs it/);
    // A member is granted the project's rights: bind on each new user or team, and only on what is new.
    asked.length = 0;
    const members = {
      ...created,
      spec: { ...(created.spec as object), members: [{ name: "amy", clusterRole: "admin" }] },
    };
    const unbound = await statusErrorOf(store.update(caller("bind users/amy"), { name: "clusters" }, members, {}));
    assert.equal(unbound.code, 403);
    assert.match(unbound.message, /cannot bind resource "users".*granting user "amy" rights through spec\.members/);
    const updated = await store.update(caller(), { name: "clusters" }, members, {});
    assert.deepEqual(asked, ["bind users/amy", "bind users/amy"]);
    asked.length = 0;
    const described = { ...updated, spec: { ...(updated.spec as object), displayName: "y" } };
    await store.update(caller(), { name: "clusters" }, described, {});
    assert.deepEqual(asked, [], "descriptive fields need no more than the right to update");
  });

  it("projectOfNamespace() reads the project from its namespace", () => {
    assert.equal(projectOfNamespace("p-", "p-team"), "team");
    assert.equal(projectOfNamespace("p-", "p-"), undefined);
    assert.equal(projectOfNamespace("p-", "default"), undefined);
    assert.equal(projectOfNamespace("p-", undefined), undefined);
  });
});
