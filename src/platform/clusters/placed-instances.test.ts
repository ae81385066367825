import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StoredRecord } from "../../storage/types.ts";
import { INSTANCES_PREFIX, PlacedInstances } from "./placed-instances.ts";

let revision = 1;
const record = (namespace: string, name: string, spec: Record<string, unknown>): StoredRecord => ({
  key: `${INSTANCES_PREFIX}${namespace}/${name}`,
  value: JSON.stringify({ metadata: { namespace, name }, spec }),
  revision: ++revision,
  createRevision: revision,
});
const on = (cluster: string) => ({ cluster });
const listed = (index: PlacedInstances, cluster: string) =>
  Object.fromEntries([...index.on(cluster, "p-")].map(([project, names]) => [project, [...names].sort()]));

describe("PlacedInstances", () => {
  it("PlacedInstances.on() gives the projects and names of the instances placed on a cluster, external ones left out", () => {
    const index = new PlacedInstances();
    index.reset([
      record("p-shop", "vc1", { clusterRef: on("edge") }),
      record("p-shop", "vc2", { clusterRef: on("edge") }),
      record("p-team", "vc1", { clusterRef: on("edge") }),
      record("p-team", "vc2", { clusterRef: on("core") }),
      record("p-team", "ext", { clusterRef: on("edge"), external: true }),
      record("p-team", "unplaced", {}),
      record("elsewhere", "vc9", { clusterRef: on("edge") }),
    ]);
    assert.deepEqual(listed(index, "edge"), { shop: ["vc1", "vc2"], team: ["vc1"] });
    assert.deepEqual(listed(index, "core"), { team: ["vc2"] });
    assert.deepEqual(listed(index, "none"), {});
    assert.deepEqual(Object.keys(Object.fromEntries(index.on("edge", "q-"))), []);
  });

  it("PlacedInstances.apply() follows writes and deletes, reset() replaces everything", () => {
    const index = new PlacedInstances();
    const vc1 = record("p-shop", "vc1", { clusterRef: on("edge") });
    index.apply({ type: "create", record: vc1 });
    assert.deepEqual(listed(index, "edge"), { shop: ["vc1"] });
    index.apply({ type: "update", record: record("p-shop", "vc1", { clusterRef: on("edge"), external: true }) });
    assert.deepEqual(listed(index, "edge"), {});
    index.apply({ type: "update", record: vc1 });
    index.apply({ type: "delete", record: vc1 });
    assert.deepEqual(listed(index, "edge"), {});
    index.apply({ type: "create", record: vc1 });
    index.reset([record("p-shop", "vc2", { clusterRef: on("core") })]);
    assert.deepEqual(listed(index, "edge"), {});
    assert.deepEqual(listed(index, "core"), { shop: ["vc2"] });
  });
});
