import assert from "node:assert/strict";
import { after, test } from "node:test";
import fc from "fast-check";
import { type CompiledPatchSet, compilePatches } from "../patches/compile.ts";
import { PatchApplyError } from "../patches/errors.ts";
import { loadEngine } from "../patches/sandbox/engine.ts";
import type { Patch } from "../patches/types.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator } from "../translate/translator.ts";
import {
  MANAGED_ANNOTATIONS_ANNOTATION,
  OBJECT_HOST_NAME_ANNOTATION,
  OBJECT_HOST_NAMESPACE_ANNOTATION,
  OBJECT_KIND_ANNOTATION,
  OBJECT_NAME_ANNOTATION,
  OBJECT_NAMESPACE_ANNOTATION,
  OBJECT_UID_ANNOTATION,
} from "./constants.ts";
import { desiredHostObject, hostObjectForVirtual, type SyncContext } from "./desired-state.ts";
import type { WireObject } from "./types.ts";

// Expressions compile on the shared QuickJS engine, which loads on demand.
await loadEngine();

const translator = createTranslator({ name: "vc", namespace: "vc-host" });
const sets: CompiledPatchSet[] = [];
after(() => {
  for (const set of sets) set.dispose();
});

function context(endpoints: Patch[] = [], secrets: Patch[] = [], owner = true): SyncContext {
  const compiled = {
    endpoints: compilePatches(endpoints, "sync.toHost.endpoints.patches"),
    secrets: compilePatches(secrets, "sync.toHost.secrets.patches"),
  };
  sets.push(compiled.endpoints, compiled.secrets);
  return {
    translator,
    vcluster: { name: "vc", namespace: "vc-host", config: {} },
    patches: compiled,
    owner: owner ? { apiVersion: "v1", kind: "Service", name: "vc", uid: "owner-uid" } : undefined,
  };
}

const virtualEndpoints = (): WireObject => ({
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: {
    name: "db",
    namespace: "team-a",
    uid: "v-uid",
    resourceVersion: "42",
    generation: 3,
    creationTimestamp: "2024-01-01T00:00:00Z",
    generateName: "d",
    finalizers: ["x/y"],
    ownerReferences: [{ apiVersion: "v1", kind: "Service", name: "db", uid: "svc-uid" }],
    managedFields: [
      {
        manager: "kubectl",
        operation: "Update",
        apiVersion: "v1",
        time: "2024-01-01T00:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: {},
      },
    ],
    labels: { app: "db", release: "r1" },
    annotations: {
      note: "hello",
      "control-plane.alpha.kubernetes.io/leader": "{}",
      [OBJECT_UID_ANNOTATION]: "forged",
      zeta: "z",
    },
  },
  subsets: [
    {
      addresses: [
        {
          ip: "10.0.0.1",
          targetRef: { kind: "Pod", name: "db-0", namespace: "team-a", uid: "p", resourceVersion: "9" },
        },
        { ip: "10.0.0.2", targetRef: { kind: "Node", name: "n1" } },
      ],
      notReadyAddresses: [{ ip: "10.0.0.3", targetRef: { kind: "Pod", name: "db-1" } }],
      ports: [{ name: "pg", port: 5432 }],
    },
  ],
});

test("desiredHostObject() translates an Endpoints name, namespace, metadata, annotations, labels and targetRefs", () => {
  const { object, references } = desiredHostObject("endpoints", virtualEndpoints(), undefined, context());
  const hostName = "db-x-team-a-x-vc";
  assert.deepEqual(object.metadata, {
    name: hostName,
    namespace: "vc-host",
    labels: {
      app: "db",
      [translator.hostLabelKey("release")]: "r1",
      [MANAGED_BY_LABEL]: "vc",
      [NAMESPACE_LABEL]: "team-a",
    },
    annotations: {
      note: "hello",
      zeta: "z",
      [OBJECT_NAME_ANNOTATION]: "db",
      [OBJECT_NAMESPACE_ANNOTATION]: "team-a",
      [OBJECT_UID_ANNOTATION]: "v-uid",
      [OBJECT_KIND_ANNOTATION]: "/v1, Kind=Endpoints",
      [OBJECT_HOST_NAME_ANNOTATION]: hostName,
      [OBJECT_HOST_NAMESPACE_ANNOTATION]: "vc-host",
      [MANAGED_ANNOTATIONS_ANNOTATION]: "note\nzeta",
    },
    ownerReferences: [{ apiVersion: "v1", kind: "Service", name: "vc", uid: "owner-uid", controller: false }],
  });
  assert.deepEqual(object.subsets, [
    {
      addresses: [
        { ip: "10.0.0.1", targetRef: { kind: "Pod", name: "db-0-x-team-a-x-vc", namespace: "vc-host" } },
        { ip: "10.0.0.2", targetRef: { kind: "Node", name: "n1" } },
      ],
      notReadyAddresses: [
        { ip: "10.0.0.3", targetRef: { kind: "Pod", name: "db-1-x-team-a-x-vc", namespace: "vc-host" } },
      ],
      ports: [{ name: "pg", port: 5432 }],
    },
  ]);
  assert.deepEqual(references, []);
});

test("desiredHostObject() omits managed-annotations and the owner reference when there is nothing to put there", () => {
  const virtual = virtualEndpoints();
  virtual.metadata!.annotations = {};
  const { object } = desiredHostObject("endpoints", virtual, undefined, context([], [], false));
  assert.equal(object.metadata?.annotations?.[MANAGED_ANNOTATIONS_ANNOTATION], undefined);
  assert.equal(object.metadata?.ownerReferences, undefined);
});

test("desiredHostObject() applies expression patches toward the host with the context", () => {
  const ctx = context([
    {
      path: 'metadata.annotations["note"]',
      expression: '"host-" + value',
      reverseExpression: 'value.replace(/^host-/, "")',
    },
    { path: "subsets[*].addresses[*].ip", expression: "context.vcluster.name + ':' + value" },
    { path: "subsets[0].ports[0].port", expression: "value + 1" },
  ]);
  const { object } = desiredHostObject("endpoints", virtualEndpoints(), undefined, ctx);
  assert.equal(object.metadata?.annotations?.note, "host-hello");
  const subset = (object.subsets as { addresses: { ip: string }[]; ports: { port: number }[] }[])[0];
  assert.deepEqual(
    subset.addresses.map((address) => address.ip),
    ["vc:10.0.0.1", "vc:10.0.0.2"],
  );
  assert.equal(subset.ports[0].port, 5433);
  const back = hostObjectForVirtual("endpoints", object, virtualEndpoints(), ctx).object;
  assert.equal(back.metadata?.annotations?.note, "hello", "reverseExpression undoes the expression");
});

test("desiredHostObject() reports a reference to a Secret with its translated name", () => {
  const ctx = context([{ path: 'metadata.annotations["secret"]', reference: { apiVersion: "v1", kind: "Secret" } }]);
  const virtual = virtualEndpoints();
  virtual.metadata!.annotations = { secret: "creds" };
  const { object, references } = desiredHostObject("endpoints", virtual, undefined, ctx);
  assert.equal(object.metadata?.annotations?.secret, "creds-x-team-a-x-vc");
  assert.equal(references.length, 1);
  assert.deepEqual(references[0].source, { name: "creds", namespace: "team-a" });
  assert.equal(references[0].kind, "Secret");
});

test("desiredHostObject() throws a PatchApplyError naming the failing patch", () => {
  const ctx = context([{ path: 'metadata.annotations["note"]', expression: "value.nope.deeper" }]);
  assert.throws(
    () => desiredHostObject("endpoints", virtualEndpoints(), undefined, ctx),
    (error: unknown) =>
      error instanceof PatchApplyError && error.field === "sync.toHost.endpoints.patches[0].expression",
  );
});

test("desiredHostObject() drops the cluster IP of a Service, requests its node ports and translates its selector", () => {
  const virtual: WireObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default", uid: "s" },
    spec: {
      type: "NodePort",
      clusterIP: "10.96.0.10",
      clusterIPs: ["10.96.0.10"],
      selector: { app: "web" },
      ports: [{ port: 80, nodePort: 30080 }],
    },
    status: { loadBalancer: {} },
  };
  const { object } = desiredHostObject("services", virtual, undefined, context());
  assert.equal(object.metadata?.name, "web-x-default-x-vc");
  assert.deepEqual(object.spec, {
    type: "NodePort",
    selector: { app: "web", [MANAGED_BY_LABEL]: "vc", [NAMESPACE_LABEL]: "default" },
    ports: [{ port: 80, nodePort: 30080 }],
  });
  assert.equal(object.status, undefined);
  assert.equal(object.metadata?.annotations?.[OBJECT_KIND_ANNOTATION], "/v1, Kind=Service");
});

test("desiredHostObject() keeps a headless Service headless", () => {
  const virtual: WireObject = { metadata: { name: "h", namespace: "default" }, spec: { clusterIP: "None" } };
  const { object } = desiredHostObject("services", virtual, undefined, context());
  assert.deepEqual(object.spec, { clusterIP: "None", clusterIPs: ["None"] });
});

test("desiredHostObject() copies a Secret's data, folds stringData in and applies the secrets patches", () => {
  const ctx = context([], [{ path: "data.user", expression: 'btoa("host-" + atob(value))' }]);
  const virtual: WireObject = {
    metadata: { name: "creds", namespace: "team-a", uid: "u" },
    type: "kubernetes.io/basic-auth",
    data: { user: btoa("alice") },
    stringData: { password: "s3cret" },
  };
  const { object } = desiredHostObject("secrets", virtual, undefined, ctx);
  assert.equal(object.metadata?.name, "creds-x-team-a-x-vc");
  assert.equal(object.type, "kubernetes.io/basic-auth");
  assert.deepEqual(object.data, { user: btoa("host-alice"), password: btoa("s3cret") });
  assert.equal(object.stringData, undefined);
});

const labelKey = fc.oneof(
  fc.constantFrom(
    "release",
    "app",
    "tier",
    MANAGED_BY_LABEL,
    NAMESPACE_LABEL,
    "virtualcluster.platform.sh/controlled-by",
  ),
  fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}\/[a-z][a-z0-9]{0,10}$/),
);

test("host labels of a synced object map back to exactly the virtual labels (round trip)", () => {
  fc.assert(
    fc.property(
      fc.dictionary(labelKey, fc.string({ maxLength: 10 })),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
      (labels, ns) => {
        const virtual: WireObject = { metadata: { name: "x", namespace: ns, labels } };
        const { object } = desiredHostObject("endpoints", virtual, undefined, context());
        const host = object.metadata?.labels ?? {};
        assert.equal(host[MANAGED_BY_LABEL], "vc");
        assert.equal(host[NAMESPACE_LABEL], ns);
        assert.deepEqual(translator.virtualLabels(host), { ...labels });
      },
    ),
  );
});

test("host names of synced objects are valid names, deterministic and distinct across namespaces", () => {
  const name = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,60}[a-z0-9])?$/);
  const namespace = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/);
  fc.assert(
    fc.property(name, namespace, namespace, (n, ns1, ns2) => {
      const one = desiredHostObject("endpoints", { metadata: { name: n, namespace: ns1 } }, undefined, context());
      const hostName = one.object.metadata?.name ?? "";
      assert.ok(hostName.length <= 63, hostName);
      assert.match(hostName, /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/);
      assert.equal(one.object.metadata?.namespace, "vc-host");
      assert.equal(one.object.metadata?.annotations?.[OBJECT_HOST_NAME_ANNOTATION], hostName);
      if (ns1 !== ns2) {
        const two = desiredHostObject("endpoints", { metadata: { name: n, namespace: ns2 } }, undefined, context());
        assert.notEqual(two.object.metadata?.name, hostName);
      }
    }),
    { numRuns: 200 },
  );
});
