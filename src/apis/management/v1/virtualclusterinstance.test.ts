import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isStatusError } from "../../../apimachinery/errors.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { AuthorizationAttributes, RequestContext } from "../../../registry/types.ts";
import { withGrantChecks } from "./access-checks.ts";
import { createProjectDefinition } from "./project.ts";
import type { Project } from "./project-schema.ts";
import {
  createVirtualClusterInstanceDefinition,
  type InstanceAuthority,
  type VirtualClusterInstance,
} from "./virtualclusterinstance.ts";

const G = "management.platform.sh";
const caOf = (object: KubeObject) => (object as VirtualClusterInstance).status?.clientCertificateAuthority;

/** Publishes a marker certificate per instance; only contexts it made itself count as the platform's writes. */
function markerAuthority(): InstanceAuthority & { platform: RequestContext } {
  const platform = testContext();
  return {
    platform,
    prepare: async ({ uid }) => `CA-OF-${uid}`,
    writesServerStatus: (context) => context === platform,
  };
}

describeResourceConformance({
  // The empty prefix makes the conformance namespace a project's namespace.
  definition: createVirtualClusterInstanceDefinition({
    namespacePrefix: () => "",
    project: async (name) => ({ apiVersion: `${G}/v1`, kind: "Project", metadata: { name } }),
    authority: markerAuthority(),
  }),
  sample: (name) => ({
    apiVersion: `${G}/v1`,
    kind: "VirtualClusterInstance",
    metadata: { name },
    spec: { displayName: "Sample", clusterRef: { cluster: "c1", namespace: "vc", virtualCluster: name } },
  }),
  changeSpec: (object) => {
    (object.spec as { displayName: string }).displayName = "Changed";
  },
});

describe("VirtualClusterInstance", () => {
  let env: TestRegistry;
  let projects: GenericStore;
  let instances: GenericStore;
  const authority = markerAuthority();
  const projectDefinition = createProjectDefinition({ namespacePrefix: () => "p-" });
  const definition = withGrantChecks(
    createVirtualClusterInstanceDefinition({
      namespacePrefix: () => "p-",
      async project(name) {
        try {
          return (await projects.get(testContext(), { name })) as Project;
        } catch (error) {
          if (isStatusError(error) && error.reason === "NotFound") return undefined;
          throw error;
        }
      },
      authority,
    }),
    { exists: async () => true },
  ); // existence (422) is tested against the platform (test/granting-fields.test.ts)
  const instance = (namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: `${G}/v1`,
    kind: "VirtualClusterInstance",
    metadata: { name, namespace },
    spec,
  });
  const create = (namespace: string, name: string, spec: Record<string, unknown> = {}, context = testContext()) =>
    instances.create(context, namespace, instance(namespace, name, spec), {});

  before(async () => {
    env = await openTestRegistry([projectDefinition, definition]);
    projects = env.store(projectDefinition);
    instances = env.store(definition);
    for (const [name, spec] of [
      ["a", {}],
      ["limited", { allowedClusters: [{ name: "prod" }] }],
    ] as const) {
      await projects.create(
        testContext(),
        undefined,
        { apiVersion: `${G}/v1`, kind: "Project", metadata: { name }, spec },
        {},
      );
    }
  });
  after(() => env.close());

  it("create() needs the namespace of an existing project, and names the project when it is missing", async () => {
    const missing = await statusErrorOf(create("p-nope", "vc"));
    assert.equal(missing.code, 422);
    assert.match(missing.message, /metadata\.namespace: Invalid value: "p-nope": project "nope" does not exist/);
    const plain = await statusErrorOf(create("default", "vc"));
    assert.equal(plain.code, 422);
    assert.match(plain.message, /not a project namespace: instances live in the namespace "p-<project>"/);
    const created = await create("p-a", "vc");
    assert.equal(created.metadata.namespace, "p-a");
  });

  it("create() starts Pending with the client CA the platform made for this uid", async () => {
    const created = await create("p-a", "with-ca");
    assert.deepEqual(created.status, {
      phase: "Pending",
      online: false,
      clientCertificateAuthority: `CA-OF-${created.metadata.uid}`,
    });
  });

  it("create() refuses an instance in a project that is being deleted", async () => {
    await projects.create(
      testContext(),
      undefined,
      { apiVersion: `${G}/v1`, kind: "Project", metadata: { name: "going", finalizers: ["example.com/hold"] } },
      {},
    );
    await projects.delete(testContext(), { name: "going" }, {});
    const error = await statusErrorOf(create("p-going", "late"));
    assert.equal(error.code, 422);
    assert.match(error.message, /project "going" is being deleted/);
  });

  it("/status sets what the virtual cluster reports but never the client CA; the main resource never sets status", async () => {
    const created = await create("p-a", "reported");
    const ca = caOf(created);
    const ref = { namespace: "p-a", name: "reported", subresource: "status" };
    const reported = await instances.patch(
      testContext(),
      ref,
      "merge",
      {
        status: {
          phase: "Ready",
          online: true,
          kubernetesVersion: "v1.32.0",
          lastHeartbeatTime: "2026-01-01T00:00:00Z",
          serverCertificateAuthority: "SERVING-CA",
          clientCertificateAuthority: "FORGED",
        },
      },
      {},
    );
    assert.deepEqual(reported.object.status, {
      phase: "Ready",
      online: true,
      kubernetesVersion: "v1.32.0",
      lastHeartbeatTime: "2026-01-01T00:00:00Z",
      serverCertificateAuthority: "SERVING-CA",
      clientCertificateAuthority: ca,
    });
    const put = { ...reported.object, status: { phase: "Failed" } };
    const replaced = await instances.update(testContext(), ref, put, {});
    assert.equal(caOf(replaced), ca, "a PUT of status keeps the client CA");
    const main = { ...replaced, status: { phase: "Sleeping" } };
    const updated = await instances.update(testContext(), { namespace: "p-a", name: "reported" }, main, {});
    assert.equal((updated.status as { phase: string }).phase, "Failed");
    const bad = await statusErrorOf(instances.patch(testContext(), ref, "merge", { status: { phase: "Dancing" } }, {}));
    assert.equal(bad.code, 422);
    const platform = await instances.patch(
      authority.platform,
      ref,
      "merge",
      { status: { clientCertificateAuthority: "NEW" } },
      {},
    );
    assert.equal(caOf(platform.object), "NEW");
  });

  it("create() and update() keep instances on the project's allowed clusters", async () => {
    const refused = await statusErrorOf(create("p-limited", "vc", { clusterRef: { cluster: "dev" } }));
    assert.equal(refused.code, 422);
    assert.match(refused.message, /spec\.clusterRef\.cluster: Unsupported value: "dev": supported values: "prod"/);
    const created = await create("p-limited", "vc", { clusterRef: { cluster: "prod" } });
    const moved = { ...created, spec: { clusterRef: { cluster: "dev" } } };
    const error = await statusErrorOf(
      instances.update(testContext(), { namespace: "p-limited", name: "vc" }, moved, {}),
    );
    assert.equal(error.code, 422);
  });

  it("validate() wants the ingress host as host[:port] without scheme", async () => {
    for (const host of ["vc1.example.com", "vc1.example.com:8443", "10.0.0.1:443", "[::1]:6443"]) {
      await create("p-a", `ok-${host.length}-${host.replace(/[^a-z0-9]/g, "")}`.slice(0, 40), {
        template: { accessPoint: { ingress: { enabled: true, host } } },
      });
    }
    const error = await statusErrorOf(
      create("p-a", "scheme", {
        template: { accessPoint: { ingress: { enabled: true, host: "https://vc1.example.com" } } },
      }),
    );
    assert.equal(error.code, 422);
    assert.match(
      error.message,
      /spec\.template\.accessPoint\.ingress\.host: Invalid value: "https:\/\/vc1\.example\.com"/,
    );
  });

  it("create() needs makeowner for another owner, not for oneself; access rules need bind", async () => {
    const asked: string[] = [];
    const caller = testContext({
      user: { name: "bob", groups: [] },
      authorizer: {
        authorize: async (a: AuthorizationAttributes) => {
          asked.push(`${a.verb} ${a.resource}/${a.name ?? ""}`);
          return { allowed: false };
        },
      },
    });
    await create("p-a", "mine", { owner: { user: "bob" } }, caller);
    assert.deepEqual(asked, []);
    const other = await statusErrorOf(create("p-a", "theirs", { owner: { user: "amy" } }, caller));
    assert.equal(other.code, 403);
    assert.match(other.message, /cannot makeowner resource "users".*making user "amy" the owner needs it/);
    const shared = await statusErrorOf(
      create("p-a", "shared", { access: [{ verbs: ["get"], users: ["amy"] }] }, caller),
    );
    assert.match(shared.message, /cannot bind resource "users"/);
  });
});
