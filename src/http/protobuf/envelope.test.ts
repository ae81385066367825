import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { StatusError } from "../../apimachinery/errors.ts";
import { decodeEnvelope, decodeEnvelopedObject } from "./envelope.ts";
import { kubectlFixtures } from "./kubectl-fixtures.ts";
import { protobufMessage } from "./messages.ts";
import { envelope, WireWriter } from "./testing.ts";

const PACKAGES: Record<string, string> = {
  v1: "k8s.io.api.core.v1",
  "rbac.authorization.k8s.io/v1": "k8s.io.api.rbac.v1",
  "authorization.k8s.io/v1": "k8s.io.api.authorization.v1",
};

/** Decodes a body with the message its envelope names. */
function decodeBody(body: Uint8Array, unknown: string[] = []) {
  const { apiVersion, kind } = decodeEnvelope(body);
  const spec =
    protobufMessage(`${PACKAGES[apiVersion] ?? "none"}.${kind}`) ?? protobufMessage("k8s.io.api.core.v1.Secret");
  assert.ok(spec);
  return decodeEnvelopedObject(body, spec, unknown);
}

function badRequest(action: () => unknown, message: RegExp): void {
  assert.throws(
    action,
    (error: unknown) => error instanceof StatusError && error.code === 400 && message.test(error.message),
  );
}

/** What `kubectl <command> --dry-run=client -o json` prints for each fixture's command, without its nulls. */
const GO_JSON = {
  namespace: { kind: "Namespace", apiVersion: "v1", metadata: { name: "team-a" }, spec: {}, status: {} },
  secret: {
    kind: "Secret",
    apiVersion: "v1",
    metadata: { name: "creds", namespace: "default" },
    data: { password: "czNjcj10", username: "YWRtaW4=" },
    type: "Opaque",
  },
  dockerRegistrySecret: {
    kind: "Secret",
    apiVersion: "v1",
    metadata: { name: "reg", namespace: "default" },
    data: {
      ".dockerconfigjson":
        "eyJhdXRocyI6eyJyLmV4YW1wbGUuY29tIjp7InVzZXJuYW1lIjoidSIsInBhc3N3b3JkIjoicCIsImF1dGgiOiJkVHB3In19fQ==",
    },
    type: "kubernetes.io/dockerconfigjson",
  },
  configmap: {
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: { name: "settings", namespace: "default" },
    data: { color: "blue", size: "10" },
    binaryData: { blob: "AAH/YmluYXJ5" },
  },
  serviceaccount: { kind: "ServiceAccount", apiVersion: "v1", metadata: { name: "builder", namespace: "default" } },
  clusterIpService: {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: "web", namespace: "default", labels: { app: "web" } },
    spec: {
      ports: [
        { name: "80-8080", protocol: "TCP", port: 80, targetPort: 8080 },
        { name: "443-https", protocol: "TCP", port: 443, targetPort: "https" },
      ],
      selector: { app: "web" },
      type: "ClusterIP",
    },
    status: { loadBalancer: {} },
  },
  headlessService: {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: "headless", namespace: "default", labels: { app: "headless" } },
    spec: { selector: { app: "headless" }, clusterIP: "None", type: "ClusterIP" },
    status: { loadBalancer: {} },
  },
  nodePortService: {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: "np", namespace: "default", labels: { app: "np" } },
    spec: {
      ports: [{ name: "80-8080", protocol: "TCP", port: 80, targetPort: 8080, nodePort: 30080 }],
      selector: { app: "np" },
      type: "NodePort",
    },
    status: { loadBalancer: {} },
  },
  externalNameService: {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: "ext", namespace: "default", labels: { app: "ext" } },
    spec: { selector: { app: "ext" }, type: "ExternalName", externalName: "example.com" },
    status: { loadBalancer: {} },
  },
  role: {
    kind: "Role",
    apiVersion: "rbac.authorization.k8s.io/v1",
    metadata: { name: "reader", namespace: "default" },
    rules: [
      {
        verbs: ["get", "list", "watch"],
        apiGroups: [""],
        resources: ["secrets", "configmaps"],
        resourceNames: ["a", "b"],
      },
    ],
  },
  rolebinding: {
    kind: "RoleBinding",
    apiVersion: "rbac.authorization.k8s.io/v1",
    metadata: { name: "reader-binding", namespace: "default" },
    subjects: [
      { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" },
      { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "devs" },
      { kind: "ServiceAccount", name: "builder", namespace: "default" },
    ],
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
  },
  clusterrole: {
    kind: "ClusterRole",
    apiVersion: "rbac.authorization.k8s.io/v1",
    metadata: { name: "healthz" },
    rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
  },
  aggregatedClusterRole: {
    kind: "ClusterRole",
    apiVersion: "rbac.authorization.k8s.io/v1",
    metadata: { name: "aggregated" },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "rbac.example.com/aggregate-to-x": "true" } }] },
  },
  clusterrolebinding: {
    kind: "ClusterRoleBinding",
    apiVersion: "rbac.authorization.k8s.io/v1",
    metadata: { name: "healthz-binding" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "bob" }],
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "healthz" },
  },
};

describe("decodeEnvelopedObject()", () => {
  for (const [name, fixture] of Object.entries(kubectlFixtures)) {
    const expected = (GO_JSON as Record<string, unknown>)[name];
    if (!expected) continue;
    it(`decodeEnvelopedObject() decodes kubectl ${fixture.command.split(" -")[0]} to the JSON kubectl means`, () => {
      const unknown: string[] = [];
      assert.deepEqual(decodeBody(Buffer.from(fixture.hex, "hex"), unknown), expected);
      assert.deepEqual(unknown, []);
    });
  }

  it("decodeEnvelopedObject() decodes kubectl auth can-i bodies (SelfSubjectAccessReview)", () => {
    assert.deepEqual(decodeBody(Buffer.from(kubectlFixtures.canI.hex, "hex")), {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      metadata: {},
      spec: { resourceAttributes: { namespace: "default", verb: "get", resource: "secrets", subresource: "status" } },
      status: { allowed: false },
    });
    assert.deepEqual(decodeBody(Buffer.from(kubectlFixtures.canINonResource.hex, "hex")).spec, {
      nonResourceAttributes: { path: "/healthz", verb: "get" },
    });
  });

  it("decodeEnvelopedObject() decodes the stored object kubectl auth reconcile PUTs back, managedFields included", () => {
    assert.deepEqual(decodeBody(Buffer.from(kubectlFixtures.reconcileUpdate.hex, "hex")), {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: {
        name: "reconciled",
        uid: "04ccaba2-67e5-4a9a-812d-e0623aab7f11",
        resourceVersion: "37",
        generation: 3,
        creationTimestamp: "2026-11-22T08:53:54Z",
        managedFields: [
          {
            manager: "kubectl",
            operation: "Update",
            apiVersion: "rbac.authorization.k8s.io/v1",
            time: "2026-11-22T08:53:57Z",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:rules": {} },
          },
        ],
      },
      rules: ["get", "list", "watch", "create"].map((verb) => ({
        verbs: [verb],
        apiGroups: [""],
        resources: ["configmaps"],
      })),
    });
  });

  it("decodeEnvelopedObject() takes apiVersion and kind from the envelope, leaving out empty ones", () => {
    const spec = protobufMessage("k8s.io.api.core.v1.ConfigMap");
    assert.ok(spec);
    const raw = new WireWriter().bytes(1, new WireWriter().string(1, "c").finish()).finish();
    assert.deepEqual(decodeEnvelopedObject(envelope("v1", "ConfigMap", raw), spec), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
    });
    assert.deepEqual(decodeEnvelopedObject(envelope("", "", raw), spec), { metadata: { name: "c" } });
  });

  it("decodeEnvelope() answers 400 for a body without the k8s\\0 prefix, truncated, or with an unknown encoding", () => {
    badRequest(() => decodeEnvelope(Buffer.from('{"kind":"Namespace"}')), /does not start with the 4 bytes "k8s\\0"/);
    badRequest(() => decodeEnvelope(Buffer.from("k8s")), /does not start with/);
    const whole = Buffer.from(kubectlFixtures.namespace.hex, "hex");
    badRequest(() => decodeEnvelope(whole.subarray(0, 20)), /ends early/);
    const spec = protobufMessage("k8s.io.api.core.v1.Namespace");
    assert.ok(spec);
    const typeMeta = new WireWriter().string(1, "v1").string(2, "Namespace").finish();
    const gzip = new WireWriter().bytes(1, typeMeta).bytes(2, []).string(3, "gzip").finish();
    badRequest(
      () => decodeEnvelopedObject(Buffer.concat([Buffer.from("k8s\0"), gzip]), spec),
      /content encoding "gzip" is not supported/,
    );
    const json = new WireWriter().bytes(1, typeMeta).bytes(2, []).string(4, "application/json").finish();
    badRequest(
      () => decodeEnvelopedObject(Buffer.concat([Buffer.from("k8s\0"), json]), spec),
      /content type "application\/json"/,
    );
  });

  it("decodeEnvelopedObject() throws nothing but 400 BadRequest for random or damaged bodies", () => {
    const fixtures = Object.values(kubectlFixtures).map((f) => Buffer.from(f.hex, "hex"));
    const damaged = fc
      .tuple(fc.constantFrom(...fixtures), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat({ max: 3 }))
      .map(([body, at, byte, how]) => {
        const i = at % body.length;
        if (how === 0) return body.subarray(0, i);
        const copy = Buffer.from(body);
        if (how === 1) copy[i] = byte;
        if (how === 2) return Buffer.concat([copy.subarray(0, i), Buffer.from([byte]), copy.subarray(i)]);
        return copy;
      });
    const random = fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.concat([Buffer.from("k8s\0"), bytes]));
    fc.assert(
      fc.property(fc.oneof(damaged, random), (body) => {
        try {
          decodeBody(body);
        } catch (error) {
          if (!(error instanceof StatusError) || error.code !== 400) throw error;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
