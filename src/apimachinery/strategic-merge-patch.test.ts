import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "./errors.ts";
import { objectSchemaOf } from "./schema.ts";
import { applyStrategicMergePatch } from "./strategic-merge-patch.ts";

// A Service-like kind: ports merged by port (as upstream's ServiceSpec), externalIPs replaced (no strategy).
const schema = objectSchemaOf({
  spec: {
    type: "object",
    properties: {
      ports: {
        type: "array",
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": "port",
        items: { type: "object", properties: { name: { type: "string" }, port: { type: "integer" } } },
      },
      externalIPs: { type: "array", items: { type: "string" } },
      selector: { type: "object", additionalProperties: { type: "string" } },
    },
  },
});

const live = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", finalizers: ["a.example/x"], labels: { app: "web", tier: "front" } },
  spec: {
    ports: [
      { name: "http", port: 80, targetPort: 8080 },
      { name: "metrics", port: 9090 },
    ],
    externalIPs: ["1.2.3.4"],
    selector: { app: "web" },
  },
};

describe("applyStrategicMergePatch()", () => {
  it("applies kubectl apply's patch: merge by key, delete an item, set the order", () => {
    // What kubectl 1.32 sent when 9090 became 9091 in the applied manifest.
    const patch = {
      metadata: { annotations: { note: "x" } },
      spec: {
        "$setElementOrder/ports": [{ port: 80 }, { port: 9091 }],
        ports: [
          { name: "metrics", port: 9091 },
          { $patch: "delete", port: 9090 },
        ],
      },
    };
    const result = applyStrategicMergePatch(live, patch, schema) as typeof live;
    assert.deepEqual(result.spec.ports, [
      { name: "http", port: 80, targetPort: 8080 },
      { name: "metrics", port: 9091 },
    ]);
    assert.deepEqual(result.metadata.labels, { app: "web", tier: "front" });
    assert.equal((result.metadata as { annotations?: object }).annotations !== undefined, true);
  });

  it("merges a changed item in place and keeps fields the patch does not name", () => {
    const result = applyStrategicMergePatch(live, { spec: { ports: [{ port: 80, targetPort: 8081 }] } }, schema);
    assert.deepEqual((result as typeof live).spec.ports[0], { name: "http", port: 80, targetPort: 8081 });
    assert.equal((result as typeof live).spec.ports.length, 2);
  });

  it("replaces lists without a strategy, and a merged list given $patch: replace", () => {
    const replaced = applyStrategicMergePatch(live, { spec: { externalIPs: ["5.6.7.8"] } }, schema) as typeof live;
    assert.deepEqual(replaced.spec.externalIPs, ["5.6.7.8"]);
    const whole = applyStrategicMergePatch(
      live,
      { spec: { ports: [{ $patch: "replace" }, { name: "only", port: 443 }] } },
      schema,
    ) as typeof live;
    assert.deepEqual(whole.spec.ports, [{ name: "only", port: 443 }]);
  });

  it("removes map keys set to null and whole maps with $patch: delete or replace", () => {
    const result = applyStrategicMergePatch(
      live,
      { metadata: { labels: { tier: null } }, spec: { selector: { $patch: "replace", role: "db" } } },
      schema,
    ) as typeof live;
    assert.deepEqual(result.metadata.labels, { app: "web" });
    assert.deepEqual(result.spec.selector, { role: "db" });
    const gone = applyStrategicMergePatch(live, { spec: { selector: { $patch: "delete" } } }, schema) as typeof live;
    assert.equal("selector" in gone.spec, false);
  });

  it("merges metadata.finalizers as a set and honours $deleteFromPrimitiveList", () => {
    const added = applyStrategicMergePatch(live, { metadata: { finalizers: ["b.example/y"] } }, schema) as typeof live;
    assert.deepEqual(added.metadata.finalizers, ["a.example/x", "b.example/y"]);
    const removed = applyStrategicMergePatch(
      added,
      { metadata: { "$deleteFromPrimitiveList/finalizers": ["a.example/x"] } },
      schema,
    ) as typeof live;
    assert.deepEqual(removed.metadata.finalizers, ["b.example/y"]);
  });

  it("does not change its inputs", () => {
    const before = structuredClone(live);
    applyStrategicMergePatch(live, { spec: { ports: [{ port: 80, name: "changed" }] } }, schema);
    assert.deepEqual(live, before);
  });

  it("answers 400 for a merged item without its merge key or an unknown directive", () => {
    const bad = (patch: object) => {
      try {
        applyStrategicMergePatch(live, patch, schema);
      } catch (error) {
        return isStatusError(error) ? `${error.code} ${error.message}` : String(error);
      }
      return "no error";
    };
    assert.match(bad({ spec: { ports: [{ name: "x" }] } }), /^400 .*does not contain declared merge key: port$/);
    assert.match(bad({ spec: { $patch: "explode" } }), /^400 .*unknown patch type: "explode" in map$/);
  });
});
