import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { compileObjectSchema } from "../../../apimachinery/schema.ts";
import { openTestRegistry, statusErrorOf, testContext } from "../../../registry/testing.ts";
import { createOwnedAccessKeyDefinition } from "./ownedaccesskey.ts";
import { type AccessKeyScope, canonicalizeScope, spec } from "./ownedaccesskey-schema.ts";

const schema = compileObjectSchema({ spec });
const withProjects = (projects: unknown) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "OwnedAccessKey",
  metadata: { name: "k" },
  spec: { displayName: "k", scope: { roles: [{ role: "virtualcluster", projects }] } },
});

describe("scope role projects", () => {
  it("canonicalizeScope() turns {project} items into names and keeps names", () => {
    const scope: AccessKeyScope = { roles: [{ role: "virtualcluster", projects: [{ project: "*" } as never, "a"] }] };
    canonicalizeScope(scope);
    assert.deepEqual(scope.roles?.[0].projects, ["*", "a"]);
    canonicalizeScope(undefined);
  });

  it("the scope schema accepts names and {project: NAME} items, nothing else", () => {
    assert.deepEqual(schema.validate(withProjects(["a", { project: "*" }])), []);
    for (const bad of [[1], [{}], [{ project: 3 }], [null], [["a"]]]) {
      const errs = schema.validate(withProjects(bad));
      assert.ok(errs.length > 0, `${JSON.stringify(bad)} is accepted`);
      assert.ok(errs.every((e) => e.field.startsWith("spec.scope.roles[0].projects[0]")));
    }
  });

  it("canonicalizeScope() after the schema always leaves only strings (any mix of both spellings)", () => {
    const item = fc.oneof(fc.string(), fc.record({ project: fc.string() }));
    fc.assert(
      fc.property(fc.array(item), (projects) => {
        const object = withProjects(structuredClone(projects));
        if (schema.validate(object).length) return false;
        canonicalizeScope(object.spec.scope as AccessKeyScope);
        const names = projects.map((p) => (typeof p === "string" ? p : p.project));
        return JSON.stringify(object.spec.scope.roles[0].projects) === JSON.stringify(names);
      }),
    );
  });

  it('an OwnedAccessKey created with the specification\'s {project: "*"} stores the project as a name', async () => {
    const definition = createOwnedAccessKeyDefinition({
      owners: {
        user: async () => ({ uid: "uid-bob", tokenGeneration: 0, sessionGeneration: 0 }),
        team: async () => undefined,
        digestInUse: async () => false,
      },
      caller: { owner: () => undefined, managesAll: () => true },
      material: { generate: () => "g".repeat(43), digest: (key) => `d-${key}` },
      limits: () => ({ accessKeyMaxTTLSeconds: 0, loginAccessKeyTTLSeconds: 0 }),
    });
    const env = await openTestRegistry([definition]);
    try {
      const store = env.store(definition);
      const body = withProjects([{ project: "*" }]);
      (body.spec as Record<string, unknown>).user = "bob";
      const created = await store.create(testContext(), undefined, body, {});
      assert.deepEqual((created.spec as { scope: AccessKeyScope }).scope.roles?.[0].projects, ["*"]);
      const stored = await store.get(testContext(), { name: "k" });
      assert.deepEqual((stored.spec as { scope: AccessKeyScope }).scope.roles?.[0].projects, ["*"]);
      const bad = withProjects([{ name: "x" }]);
      (bad.spec as Record<string, unknown>).user = "bob";
      bad.metadata.name = "k2";
      assert.equal((await statusErrorOf(store.create(testContext(), undefined, bad, {}))).code, 422);
    } finally {
      await env.close();
    }
  });
});
