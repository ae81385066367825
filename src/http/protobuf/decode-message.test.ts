import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { StatusError } from "../../apimachinery/errors.ts";
import type { JsonMap } from "../../apimachinery/types.ts";
import { decodeMessage } from "./decode-message.ts";
import { compileMessageTables, type FieldSpec, type MessageSpec } from "./message-schema.ts";
import { protobufMessage } from "./messages.ts";
import { encodeMessage, WireWriter } from "./testing.ts";

const META = "k8s.io.apimachinery.pkg.apis.meta.v1";
const CORE = "k8s.io.api.core.v1";
const spec = (name: string): MessageSpec => {
  const found = protobufMessage(name);
  assert.ok(found, name);
  return found;
};
const w = () => new WireWriter();
const decode = (name: string, bytes: Uint8Array, unknown: string[] = []) =>
  decodeMessage(bytes, 0, bytes.length, spec(name), unknown);

function badRequest(action: () => unknown, message: RegExp): void {
  assert.throws(
    action,
    (error: unknown) => error instanceof StatusError && error.code === 400 && message.test(error.message),
  );
}

/** A map entry message {1: key, 2: value}. */
const entry = (key: string, value: string | Uint8Array) =>
  typeof value === "string"
    ? w().string(1, key).string(2, value).finish()
    : w().string(1, key).bytes(2, value).finish();

describe("decodeMessage()", () => {
  it("decodeMessage() reads every ObjectMeta field by its upstream number", () => {
    const owner = w().string(1, "ReplicaSet").string(3, "web-1").string(4, "u-1").string(5, "apps/v1");
    owner.uint(6, true).uint(7, false);
    const managed = w()
      .string(1, "kubectl")
      .string(2, "Update")
      .string(3, "v1")
      .bytes(4, w().uint(1, 1700000000).finish());
    managed.string(6, "FieldsV1").bytes(7, w().string(1, '{"f:data":{}}').finish()).string(8, "status");
    const bytes = w()
      .string(1, "web")
      .string(2, "web-")
      .string(3, "shop")
      .string(4, "/api/v1/x")
      .string(5, "0b9b")
      .string(6, "42")
      .uint(7, 3)
      .bytes(8, w().uint(1, 1700000000).finish())
      .bytes(9, w().uint(1, 1700000060).finish())
      .uint(10, 30)
      .bytes(11, entry("app", "web"))
      .bytes(11, entry("tier", ""))
      .bytes(12, entry("note", "hi"))
      .bytes(13, owner.finish())
      .string(14, "example.com/a")
      .string(14, "example.com/b")
      .bytes(17, managed.finish())
      .finish();
    assert.deepEqual(decode(`${META}.ObjectMeta`, bytes), {
      name: "web",
      generateName: "web-",
      namespace: "shop",
      selfLink: "/api/v1/x",
      uid: "0b9b",
      resourceVersion: "42",
      generation: 3,
      creationTimestamp: "2023-11-14T22:13:20Z",
      deletionTimestamp: "2023-11-14T22:14:20Z",
      deletionGracePeriodSeconds: 30,
      labels: { app: "web", tier: "" },
      annotations: { note: "hi" },
      ownerReferences: [
        {
          kind: "ReplicaSet",
          name: "web-1",
          uid: "u-1",
          apiVersion: "apps/v1",
          controller: true,
          blockOwnerDeletion: false,
        },
      ],
      finalizers: ["example.com/a", "example.com/b"],
      managedFields: [
        {
          manager: "kubectl",
          operation: "Update",
          apiVersion: "v1",
          time: "2023-11-14T22:13:20Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:data": {} },
          subresource: "status",
        },
      ],
    });
  });

  it("decodeMessage() drops zero values Go's JSON omits, keeps those of pointer and non-omitempty fields", () => {
    // ObjectMeta as Go writes it for a new object: every string, generation 0 and an empty creationTimestamp.
    const meta = w().string(1, "x").string(2, "").string(3, "").uint(7, 0).bytes(8, []).uint(10, 0).finish();
    assert.deepEqual(decode(`${META}.ObjectMeta`, meta), { name: "x", deletionGracePeriodSeconds: 0 });
    const port = w().string(1, "").string(2, "").uint(3, 0).uint(5, 0).finish();
    assert.deepEqual(decode(`${CORE}.ServicePort`, port), { port: 0 });
    const secret = w().uint(5, false).string(3, "").finish();
    assert.deepEqual(decode(`${CORE}.Secret`, secret), { immutable: false });
    const subject = w().string(1, "").string(2, "").string(3, "").finish();
    assert.deepEqual(decode("k8s.io.api.rbac.v1.Subject", subject), { kind: "", name: "" });
  });

  it("decodeMessage() answers a message field present on the wire with an object, even an empty one", () => {
    const namespace = w().bytes(1, w().string(1, "a").finish()).bytes(2, []).bytes(3, w().string(1, "").finish());
    assert.deepEqual(decode(`${CORE}.Namespace`, namespace.finish()), {
      metadata: { name: "a" },
      spec: {},
      status: {},
    });
  });

  it("decodeMessage() merges a message field seen twice, appends repeated ones, and lets the last scalar win", () => {
    const bytes = w()
      .bytes(1, w().string(1, "first").bytes(11, entry("a", "1")).finish())
      .bytes(1, w().string(3, "ns").bytes(11, entry("b", "2")).bytes(11, entry("a", "3")).finish())
      .finish();
    assert.deepEqual(decode(`${CORE}.ConfigMap`, bytes), {
      metadata: { name: "first", namespace: "ns", labels: { a: "3", b: "2" } },
    });
    const service = w().string(3, "10.0.0.1").string(3, "").string(10, "a").string(10, "b").finish();
    assert.deepEqual(decode(`${CORE}.ServiceSpec`, service), { externalName: "b" });
  });

  it("decodeMessage() reads map<string, bytes> values as base64 and entries missing a key or value as empty", () => {
    const bytes = w()
      .bytes(2, entry("bin", Uint8Array.from([0, 1, 255])))
      .bytes(2, w().string(1, "novalue").finish())
      .bytes(2, w().bytes(2, [1]).finish())
      .bytes(4, entry("plain", "text"))
      .finish();
    assert.deepEqual(decode(`${CORE}.Secret`, bytes), {
      data: { bin: "AAH/", novalue: "", "": "AQ==" },
      stringData: { plain: "text" },
    });
  });

  it("decodeMessage() refuses a __proto__ map key as the JSON decoder does", () => {
    badRequest(
      () => decode(`${CORE}.ConfigMap`, w().bytes(2, entry("__proto__", "x")).finish()),
      /forbidden key "__proto__"/,
    );
  });

  it("decodeMessage() reads Event, Endpoints and DeleteOptions fields by their upstream numbers", () => {
    const event = w()
      .bytes(2, w().string(1, "Pod").string(3, "web").string(7, "spec.containers{a}").finish())
      .string(3, "Started")
      .string(4, "started a")
      .bytes(5, w().string(1, "kubelet").string(2, "node-1").finish())
      .bytes(6, w().uint(1, 1700000000).finish())
      .bytes(7, w().uint(1, 1700000060).finish())
      .uint(8, 2)
      .string(9, "Normal")
      .bytes(10, w().uint(1, 1700000000).uint(2, 5000).finish())
      .bytes(11, w().uint(1, 4).bytes(2, w().uint(1, 1700000001).finish()).finish())
      .string(12, "Start")
      .bytes(13, w().string(1, "Node").finish())
      .string(14, "")
      .string(15, "kubelet-node-1")
      .finish();
    assert.deepEqual(decode(`${CORE}.Event`, event), {
      involvedObject: { kind: "Pod", name: "web", fieldPath: "spec.containers{a}" },
      reason: "Started",
      message: "started a",
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: "2023-11-14T22:13:20Z",
      lastTimestamp: "2023-11-14T22:14:20Z",
      count: 2,
      type: "Normal",
      eventTime: "2023-11-14T22:13:20.000005Z",
      series: { count: 4, lastObservedTime: "2023-11-14T22:13:21.000000Z" },
      action: "Start",
      related: { kind: "Node" },
      reportingComponent: "",
      reportingInstance: "kubelet-node-1",
    });

    const address = w()
      .string(1, "10.0.0.5")
      .string(3, "web-0")
      .string(4, "node-1")
      .bytes(2, w().string(1, "Pod").finish());
    const subset = w()
      .bytes(1, address.finish())
      .bytes(2, w().string(1, "10.0.0.6").finish())
      .bytes(3, w().string(1, "http").uint(2, 80).string(3, "TCP").string(4, "http").finish());
    assert.deepEqual(decode(`${CORE}.Endpoints`, w().bytes(2, subset.finish()).finish()), {
      subsets: [
        {
          addresses: [{ ip: "10.0.0.5", hostname: "web-0", nodeName: "node-1", targetRef: { kind: "Pod" } }],
          notReadyAddresses: [{ ip: "10.0.0.6" }],
          ports: [{ name: "http", port: 80, protocol: "TCP", appProtocol: "http" }],
        },
      ],
    });

    const options = w()
      .uint(1, 0)
      .bytes(2, w().string(1, "u-1").string(2, "").finish())
      .uint(3, false)
      .string(4, "Foreground")
      .string(5, "All")
      .uint(6, true)
      .finish();
    assert.deepEqual(decode(`${META}.DeleteOptions`, options), {
      gracePeriodSeconds: 0,
      preconditions: { uid: "u-1", resourceVersion: "" },
      orphanDependents: false,
      propagationPolicy: "Foreground",
      dryRun: ["All"],
      ignoreStoreReadErrorWithClusterBreakingPotential: true,
    });
  });

  it("decodeMessage() reads Service status, session affinity and load balancer fields", () => {
    const ingress = w().string(1, "1.2.3.4").string(3, "VIP").bytes(4, w().uint(1, 80).string(2, "TCP").finish());
    const condition = w().string(1, "Ready").string(2, "True").uint(3, 2).bytes(4, w().uint(1, 1700000000).finish());
    condition.string(5, "").string(6, "");
    const status = w().bytes(1, w().bytes(1, ingress.finish()).finish()).bytes(2, condition.finish());
    const spec_ = w()
      .bytes(14, w().bytes(1, w().uint(1, 10800).finish()).finish())
      .uint(20, false)
      .string(22, "Local")
      .string(18, "10.0.0.1")
      .string(19, "IPv4")
      .uint(12, 30000)
      .uint(13, true);
    assert.deepEqual(decode(`${CORE}.Service`, w().bytes(2, spec_.finish()).bytes(3, status.finish()).finish()), {
      spec: {
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        allocateLoadBalancerNodePorts: false,
        internalTrafficPolicy: "Local",
        clusterIPs: ["10.0.0.1"],
        ipFamilies: ["IPv4"],
        healthCheckNodePort: 30000,
        publishNotReadyAddresses: true,
      },
      status: {
        loadBalancer: { ingress: [{ ip: "1.2.3.4", ipMode: "VIP", ports: [{ port: 80, protocol: "TCP" }] }] },
        conditions: [
          {
            type: "Ready",
            status: "True",
            observedGeneration: 2,
            lastTransitionTime: "2023-11-14T22:13:20Z",
            reason: "",
            message: "",
          },
        ],
      },
    });
  });

  it("decodeMessage() skips unknown field numbers and reports those with a non-zero value, by path", () => {
    const unknown: string[] = [];
    const port = w().uint(3, 80).uint(99, 7).uint(98, 0).finish();
    const bytes = w()
      .bytes(1, w().string(1, "x").string(40, "").finish())
      .bytes(2, w().bytes(1, port).string(77, "hello").finish())
      .bytes(9, w().uint(1, 5).finish())
      .finish();
    assert.deepEqual(decode(`${CORE}.Service`, bytes, unknown), {
      metadata: { name: "x" },
      spec: { ports: [{ port: 80 }] },
    });
    assert.deepEqual(unknown, [
      'unknown field number 99 in "spec.ports[0]"',
      'unknown field number 77 in "spec"',
      "unknown field number 9",
    ]);
  });

  it("decodeMessage() answers 400 naming the field for a value of the wrong wire type", () => {
    const bytes = w()
      .bytes(2, w().bytes(1, w().string(3, "80").finish()).finish())
      .finish();
    badRequest(
      () => decode(`${CORE}.Service`, bytes),
      /field "spec\.ports\[0\]\.port" has wire type 2 at byte 4, expected 0/,
    );
    badRequest(() => decode(`${CORE}.Service`, w().uint(1, 5).finish()), /field "metadata" has wire type 0/);
  });

  it("decodeMessage() throws nothing but 400 BadRequest for any bytes", () => {
    const names = [`${CORE}.Service`, `${CORE}.Event`, `${META}.ObjectMeta`, "k8s.io.api.rbac.v1.ClusterRole"];
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.uint8Array({ maxLength: 200 }), (name, bytes) => {
        try {
          decode(name, bytes);
        } catch (error) {
          if (!(error instanceof StatusError) || error.code !== 400) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("decodeMessage() reads back what encodeMessage() wrote, for generated objects of every served kind", () => {
    const kinds = [
      ...["Namespace", "Secret", "ConfigMap", "ServiceAccount", "Service", "Endpoints", "Event"].map(
        (k) => `${CORE}.${k}`,
      ),
      ...["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"].map((k) => `k8s.io.api.rbac.v1.${k}`),
      `${META}.DeleteOptions`,
    ];
    for (const name of kinds) {
      fc.assert(
        fc.property(objectOf(spec(name)), (object) => {
          assert.deepEqual(decode(name, encodeMessage(object, spec(name))), object);
        }),
        { numRuns: 40 },
      );
    }
  });

  it("decodeMessage() stops a message that contains itself at the nesting bound", () => {
    const node = compileMessageTables([{ package: "test", messages: { Node: "1 name, 2 child Node" } }]).get(
      "test.Node",
    )!;
    /** `levels` nested Node messages, the innermost named "leaf". */
    const nested = (levels: number): Uint8Array => {
      let bytes = w().string(1, "leaf").finish();
      for (let i = 1; i < levels; i++) bytes = w().bytes(2, bytes).finish();
      return bytes;
    };
    const decodeNode = (bytes: Uint8Array) => decodeMessage(bytes, 0, bytes.length, node);
    let value = decodeNode(nested(100));
    for (let i = 1; i < 100; i++) value = value.child as JsonMap;
    assert.equal(value.name, "leaf");
    badRequest(() => decodeNode(nested(101)), /^the request body is nested too deeply at "child(\.child){99}"/);
    badRequest(() => decodeNode(nested(2_000)), /nested too deeply at "child/);
  });
});

// Generated objects in the decoder's canonical shape: zero scalars only where the field keeps them, non-empty
// lists and maps, times to the second (MicroTime to the microsecond) within the years JSON can carry.
const text = fc.string({ unit: "grapheme", maxLength: 8 });
const key = text.filter((k) => k !== "__proto__");
const seconds = fc.integer({ min: -62135596799, max: 253402300799 });
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 19);

function scalarOf(field: FieldSpec & { type: { kind: "scalar" } }): fc.Arbitrary<unknown> {
  const keep = field.keepZero;
  switch (field.type.scalar) {
    case "string":
      return keep ? text : text.filter((s) => s !== "");
    case "bytes":
      return fc.uint8Array({ minLength: keep ? 0 : 1, maxLength: 8 }).map((b) => Buffer.from(b).toString("base64"));
    case "bool":
      return keep ? fc.boolean() : fc.constant(true);
    case "int32":
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).filter((n) => keep || n !== 0);
    case "int64":
      return fc.maxSafeInteger().filter((n) => keep || n !== 0);
  }
}

function arbitraryOf(field: FieldSpec): fc.Arbitrary<unknown> {
  const type = field.type;
  switch (type.kind) {
    case "scalar":
      return scalarOf(field as FieldSpec & { type: { kind: "scalar" } });
    case "map": {
      const value =
        type.value === "string" ? text : fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString("base64"));
      return fc.dictionary(key, value, { minKeys: 1, maxKeys: 3, noNullPrototype: true });
    }
    case "message":
      return objectOf(type.message);
    case "special":
      switch (type.special) {
        case "Time":
          return seconds.map((s) => `${iso(s)}Z`);
        case "MicroTime":
          return fc
            .tuple(seconds, fc.integer({ min: 0, max: 999999 }))
            .map(([s, us]) => `${iso(s)}.${String(us).padStart(6, "0")}Z`);
        case "IntOrString":
          return fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), text);
        case "Quantity":
          return text;
        case "RawExtension":
        case "FieldsV1":
          return fc.dictionary(
            key.map((k) => `f:${k}`),
            fc.constant({}),
            { minKeys: 1, maxKeys: 3, noNullPrototype: true },
          );
      }
  }
}

function objectOf(message: MessageSpec): fc.Arbitrary<JsonMap> {
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of message.fields.values()) {
    const one = arbitraryOf(field);
    shape[field.name] = field.repeated ? fc.array(one, { minLength: 1, maxLength: 2 }) : one;
  }
  return fc.record(shape, { requiredKeys: [], noNullPrototype: true }) as fc.Arbitrary<JsonMap>;
}
