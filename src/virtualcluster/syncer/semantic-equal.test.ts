import assert from "node:assert/strict";
import { test } from "node:test";
import { semanticallyEqual } from "./semantic-equal.ts";
import { kindOf } from "./synced-kinds.ts";
import type { WireObject } from "./types.ts";

const meta = { name: "x", namespace: "h", labels: { a: "1" }, annotations: { b: "2" } };

test("semanticallyEqual() ignores server-set metadata and empty values", () => {
  const desired: WireObject = {
    metadata: { ...meta },
    subsets: [{ addresses: [{ ip: "1.2.3.4" }], ports: [{ port: 80 }] }],
  };
  const actual: WireObject = {
    metadata: { ...meta, uid: "u", resourceVersion: "7", creationTimestamp: "2024-01-01T00:00:00Z", finalizers: [] },
    subsets: [{ addresses: [{ ip: "1.2.3.4" }], notReadyAddresses: [], ports: [{ port: 80, protocol: "TCP" }] }],
  };
  assert.equal(semanticallyEqual(kindOf("endpoints"), desired, actual), true);
});

test("semanticallyEqual() sees a changed label, annotation, owner or subset", () => {
  const base: WireObject = { metadata: { ...meta }, subsets: [{ addresses: [{ ip: "1.2.3.4" }] }] };
  const variants: WireObject[] = [
    { ...base, metadata: { ...meta, labels: { a: "2" } } },
    { ...base, metadata: { ...meta, annotations: {} } },
    { ...base, metadata: { ...meta, ownerReferences: [{ apiVersion: "v1", kind: "Service", name: "o", uid: "u" }] } },
    { ...base, subsets: [{ addresses: [{ ip: "1.2.3.5" }] }] },
  ];
  for (const variant of variants) assert.equal(semanticallyEqual(kindOf("endpoints"), base, variant), false);
});

test("semanticallyEqual() ignores the cluster IPs and defaults a Service gets on the host", () => {
  const desired: WireObject = { metadata: { ...meta }, spec: { ports: [{ port: 80 }], selector: { app: "x" } } };
  const actual: WireObject = {
    metadata: { ...meta },
    spec: {
      type: "ClusterIP",
      clusterIP: "10.0.0.9",
      clusterIPs: ["10.0.0.9"],
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      sessionAffinity: "None",
      internalTrafficPolicy: "Cluster",
      ports: [{ port: 80, protocol: "TCP", targetPort: 80 }],
      selector: { app: "x" },
    },
    status: { loadBalancer: {} },
  };
  assert.equal(semanticallyEqual(kindOf("services"), desired, actual), true);
  assert.equal(semanticallyEqual(kindOf("services"), { ...desired, spec: { ports: [{ port: 81 }] } }, actual), false);
});

test("semanticallyEqual() compares a Secret's type and data", () => {
  const desired: WireObject = { metadata: { ...meta }, data: { k: "dg==" } };
  assert.equal(
    semanticallyEqual(kindOf("secrets"), desired, { metadata: { ...meta }, type: "Opaque", data: { k: "dg==" } }),
    true,
  );
  assert.equal(semanticallyEqual(kindOf("secrets"), desired, { metadata: { ...meta }, data: { k: "dw==" } }), false);
});

test("Services: the update keeps the resourceVersion and the host-allocated values the desired object lacks", () => {
  const desired: WireObject = { metadata: { ...meta }, spec: { type: "NodePort", ports: [{ port: 80 }] } };
  const actual: WireObject = {
    metadata: { ...meta, resourceVersion: "9" },
    spec: { clusterIP: "10.0.0.9", clusterIPs: ["10.0.0.9"], ports: [{ port: 80, protocol: "TCP", nodePort: 30001 }] },
  };
  const [body] = kindOf("services").updateBodies?.(desired, actual) ?? [];
  assert.equal(body.metadata?.resourceVersion, "9");
  assert.deepEqual(body.spec, {
    type: "NodePort",
    clusterIP: "10.0.0.9",
    clusterIPs: ["10.0.0.9"],
    ports: [{ port: 80, nodePort: 30001 }],
  });
  assert.equal(desired.metadata?.resourceVersion, undefined, "the desired object is not modified");
});

test("Services: a requested node port is compared and requested; the fallback takes the host's", () => {
  const desired: WireObject = {
    metadata: { ...meta },
    spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] },
  };
  const actual: WireObject = {
    metadata: { ...meta, resourceVersion: "9" },
    spec: { type: "NodePort", ports: [{ port: 80, protocol: "TCP", nodePort: 32297 }] },
  };
  assert.equal(semanticallyEqual(kindOf("services"), desired, actual), false);
  const [asked, fallback] = kindOf("services").updateBodies?.(desired, actual) ?? [];
  assert.equal((asked.spec as { ports: { nodePort: number }[] }).ports[0].nodePort, 30080);
  assert.equal((fallback.spec as { ports: { nodePort: number }[] }).ports[0].nodePort, 32297);
});

test("semanticallyEqual() knows the session affinity timeout the host defaults", () => {
  const desired: WireObject = { metadata: { ...meta }, spec: { sessionAffinity: "ClientIP", ports: [{ port: 80 }] } };
  const actual: WireObject = {
    metadata: { ...meta },
    spec: {
      sessionAffinity: "ClientIP",
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      ports: [{ port: 80, protocol: "TCP", targetPort: 80 }],
    },
  };
  assert.equal(semanticallyEqual(kindOf("services"), desired, actual), true);
});
