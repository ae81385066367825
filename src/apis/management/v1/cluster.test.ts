import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import { withGrantChecks } from "./access-checks.ts";
import { createClusterDefinition } from "./cluster.ts";

const G = "management.platform.sh";
const definition = withGrantChecks(createClusterDefinition(), { exists: async () => true });

describeResourceConformance({
  definition,
  sample: (name) => ({
    apiVersion: `${G}/v1`,
    kind: "Cluster",
    metadata: { name },
    spec: {
      displayName: "Sample",
      costControl: { metrics: { retention: "30d" } },
    },
  }),
  changeSpec: (object) => {
    (object.spec as { displayName: string }).displayName = "Changed";
  },
});

describe("Cluster", () => {
  let env: TestRegistry;
  let clusters: GenericStore;
  const cluster = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: `${G}/v1`,
    kind: "Cluster",
    metadata: { name },
    spec,
  });

  before(async () => {
    env = await openTestRegistry([definition]);
    clusters = env.store(definition);
  });
  after(() => env.close());

  it("create() starts Pending and offline, whatever status was sent", async () => {
    const created = await clusters.create(
      testContext(),
      undefined,
      { ...cluster("fresh"), status: { phase: "Ready", online: true } },
      {},
    );
    assert.deepEqual(created.status, { phase: "Pending", online: false });
  });

  it("create() refuses a name that is not a DNS label (it goes into URLs and host names)", async () => {
    const error = await statusErrorOf(clusters.create(testContext(), undefined, cluster("a.b"), {}));
    assert.equal(error.code, 422);
    assert.match(error.message, /metadata\.name: Invalid value: "a\.b"/);
  });

  it("create() checks the cost control overrides against the Config's schema", async () => {
    const error = await statusErrorOf(
      clusters.create(testContext(), undefined, cluster("costly", { costControl: { metrics: { replicas: -1 } } }), {}),
    );
    assert.equal(error.code, 422);
    assert.match(error.message, /spec\.costControl\.metrics\.replicas/);
  });

  it("create() holds the cost control overrides to what a Prometheus process can honour, as the Config is", async () => {
    const error = await statusErrorOf(
      clusters.create(
        testContext(),
        undefined,
        cluster("costly", {
          costControl: {
            metrics: { replicas: 2, storage: { storageClass: "gp3" }, retention: "3mo" },
            costEstimator: { resources: { limits: { cpu: "1" } } },
          },
        }),
        {},
      ),
    );
    assert.equal(error.code, 422);
    assert.match(error.message, /spec\.costControl\.metrics\.replicas: Invalid value: 2: must be 0 or 1/);
    assert.match(error.message, /spec\.costControl\.metrics\.storage\.storageClass: Invalid value: "gp3"/);
    assert.match(error.message, /spec\.costControl\.metrics\.retention: Invalid value: "3mo"/);
    assert.match(error.message, /spec\.costControl\.costEstimator\.resources: Invalid value/);
    const fine = await clusters.create(
      testContext(),
      undefined,
      cluster("thrifty", { costControl: { metrics: { replicas: 0, storage: { storageClass: "-" } } } }),
      {},
    );
    assert.equal(fine.metadata.name, "thrifty");
  });
});
