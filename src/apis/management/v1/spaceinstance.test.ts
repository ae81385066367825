import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { AuthorizationAttributes, RequestContext } from "../../../registry/types.ts";
import { withGrantChecks } from "./access-checks.ts";
import { CLUSTER_AGENT_FINALIZER } from "./project-placement.ts";
import type { Project } from "./project-schema.ts";
import { createSpaceInstanceDefinition } from "./spaceinstance.ts";

const G = "management.platform.sh";
const projects: Record<string, Project> = {
  a: { apiVersion: `${G}/v1`, kind: "Project", metadata: { name: "a" } },
  limited: {
    apiVersion: `${G}/v1`,
    kind: "Project",
    metadata: { name: "limited" },
    spec: { allowedClusters: [{ name: "prod" }] },
  },
};

describeResourceConformance({
  // The empty prefix makes the conformance namespace a project's namespace; without clusters no finalizer is added.
  definition: createSpaceInstanceDefinition({
    namespacePrefix: () => "",
    project: async (name) => ({ apiVersion: `${G}/v1`, kind: "Project", metadata: { name } }),
  }),
  sample: (name) => ({
    apiVersion: `${G}/v1`,
    kind: "SpaceInstance",
    metadata: { name },
    spec: { displayName: "Sample", clusterRef: { cluster: "c1" } },
  }),
  changeSpec: (object) => {
    (object.spec as { displayName: string }).displayName = "Changed";
  },
});

describe("SpaceInstance", () => {
  let env: TestRegistry;
  let spaces: GenericStore;
  const usable = new Set(["dev", "prod"]);
  const definition = withGrantChecks(
    createSpaceInstanceDefinition({
      namespacePrefix: () => "p-",
      project: async (name) => projects[name],
      clusters: { exists: async (name) => name !== "missing" },
    }),
    { exists: async () => true },
  );
  /** A caller who may use only the clusters in `usable`. */
  const caller: RequestContext = testContext({
    user: { name: "dev-user", groups: [] },
    authorizer: {
      authorize: async (a: AuthorizationAttributes) => ({
        allowed: a.resource !== "clusters" || (a.verb === "use" && usable.has(a.name ?? "")),
      }),
    },
  });
  const space = (namespace: string, name: string, clusterRef: Record<string, unknown>): KubeObject => ({
    apiVersion: `${G}/v1`,
    kind: "SpaceInstance",
    metadata: { name, namespace },
    spec: { clusterRef },
  });
  const create = (namespace: string, name: string, clusterRef: Record<string, unknown>) =>
    spaces.create(caller, namespace, space(namespace, name, clusterRef), {});

  before(async () => {
    env = await openTestRegistry([definition]);
    spaces = env.store(definition);
  });
  after(() => env.close());

  it("create() defaults the namespace to the space's name, holds a finalizer and starts Pending", async () => {
    const created = await create("p-a", "team-x", { cluster: "dev" });
    assert.deepEqual((created.spec as { clusterRef: unknown }).clusterRef, { cluster: "dev", namespace: "team-x" });
    assert.deepEqual(created.metadata.finalizers, [CLUSTER_AGENT_FINALIZER]);
    assert.equal((created.status as { phase: string }).phase, "Pending");
  });

  it("create() needs a cluster that exists, that the project allows and that the caller may use", async () => {
    const missing = await statusErrorOf(create("p-a", "s1", { cluster: "missing" }));
    assert.equal(missing.code, 422);
    assert.match(missing.message, /cluster "missing" does not exist/);
    const notAllowed = await statusErrorOf(create("p-limited", "s2", { cluster: "dev" }));
    assert.equal(notAllowed.code, 422);
    assert.match(notAllowed.message, /spec\.clusterRef\.cluster: Unsupported value: "dev"/);
    const notUsable = await statusErrorOf(create("p-a", "s3", { cluster: "other" }));
    assert.equal(notUsable.code, 403);
    assert.match(notUsable.message, /cannot use the cluster/);
    const noProject = await statusErrorOf(create("p-nope", "s4", { cluster: "dev" }));
    assert.equal(noProject.code, 422);
    assert.match(noProject.message, /project "nope" does not exist/);
  });

  it("create() refuses the host's own namespaces and names that are no DNS label", async () => {
    for (const namespace of ["kube-system", "default", "virtualcluster-platform"]) {
      const error = await statusErrorOf(create("p-a", `own-${namespace}`, { cluster: "dev", namespace }));
      assert.equal(error.code, 422, namespace);
      assert.match(error.message, /belongs to the host cluster itself/);
    }
    const bad = await statusErrorOf(create("p-a", "dotted", { cluster: "dev", namespace: "a.b" }));
    assert.equal(bad.code, 422);
  });

  it("update() cannot move a space to another cluster or namespace", async () => {
    const created = await create("p-a", "fixed", { cluster: "dev" });
    const moved = structuredClone(created) as KubeObject & { spec: { clusterRef: Record<string, string> } };
    moved.spec.clusterRef = { cluster: "prod", namespace: "elsewhere" };
    const error = await statusErrorOf(spaces.update(caller, { namespace: "p-a", name: "fixed" }, moved, {}));
    assert.equal(error.code, 422);
    assert.match(error.message, /cannot move to another cluster/);
    assert.match(error.message, /namespace cannot change/);
  });
});
