import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import { createHelmReleaseDefinition, HELM_RELEASE_FINALIZER } from "./helmrelease.ts";

const G = "management.platform.sh";
const project = async (name: string) => ({ apiVersion: `${G}/v1`, kind: "Project", metadata: { name } });
const release = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: `${G}/v1`,
  kind: "HelmRelease",
  metadata: { name, namespace: "p-shop" },
  spec: { chart: { repository: "main", name: "redis" }, target: { virtualClusterInstance: "vc1" }, ...spec },
});

describeResourceConformance({
  // The empty prefix makes the conformance namespace a project's namespace; no finalizer without the platform.
  definition: createHelmReleaseDefinition({ namespacePrefix: () => "", project }),
  sample: (name) => ({ ...release(name, {}), metadata: { name } }),
  changeSpec: (object) => {
    (object.spec as { values: string }).values = "replicas: 2\n";
  },
});

describe("HelmRelease", () => {
  let env: TestRegistry;
  let releases: GenericStore;
  before(async () => {
    const definition = createHelmReleaseDefinition({
      namespacePrefix: () => "p-",
      project,
      installProblem: async (r) =>
        r.spec?.target?.virtualClusterInstance === "outside" ? "not run by an agent with helm" : undefined,
      uninstallFinalizer: true,
    });
    env = await openTestRegistry([definition]);
    releases = env.store(definition);
  });
  after(() => env.close());

  const create = (object: KubeObject) => releases.create(testContext(), "p-shop", object, {});

  it("create() holds the release with the uninstall finalizer and starts Pending", async () => {
    const created = await create(release("held", {}));
    assert.deepEqual(created.metadata.finalizers, [HELM_RELEASE_FINALIZER]);
    assert.equal((created.status as { phase: string }).phase, "Pending");
  });

  it("create() refuses a target no agent with helm runs, saying why", async () => {
    const error = await statusErrorOf(create(release("nowhere", { target: { virtualClusterInstance: "outside" } })));
    assert.equal(error.code, 422);
    assert.match(error.message, /spec\.target: Invalid value.*not run by an agent with helm/);
  });

  it("validate() wants one target, DNS names and a version that cannot pass for a flag", async () => {
    for (const [spec, field] of [
      [{ target: {} }, "spec.target"],
      [{ target: { space: "s", virtualClusterInstance: "v" } }, "spec.target"],
      [{ target: { space: "s", namespace: "apps" } }, "spec.target.namespace"],
      [{ target: { virtualClusterInstance: "v", namespace: "Not_DNS" } }, "spec.target.namespace"],
      [{ releaseName: "-flag" }, "spec.releaseName"],
      [{ releaseName: "a".repeat(54) }, "spec.releaseName"],
      [{ chart: { repository: "main", name: "other/redis" } }, "spec.chart.name"],
      [{ chart: { repository: "main", name: "redis", version: "--post-renderer=x" } }, "spec.chart.version"],
      [{ values: "x".repeat(256 * 1024 + 1) }, "spec.values"],
    ] as const) {
      const error = await statusErrorOf(create(release("bad", spec)));
      assert.equal(error.code, 422, JSON.stringify(spec));
      assert.ok(
        (error.status.details?.causes ?? []).some((c) => c.field === field),
        `${JSON.stringify(spec)}: ${error.message}`,
      );
    }
  });

  it("validateUpdate() keeps the target and the release name", async () => {
    const created = await create(release("fixed", {}));
    const moved = structuredClone(created);
    (moved.spec as { target: unknown }).target = { virtualClusterInstance: "other" };
    const error = await statusErrorOf(
      releases.update(testContext(), { namespace: "p-shop", name: "fixed" }, moved, {}),
    );
    assert.equal(error.code, 422);
    assert.match(error.message, /spec\.target: Forbidden: an app cannot move/);
  });
});
