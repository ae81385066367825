// An instance's own runtime is the only key that may write it (issue 30 item 4), over real HTTPS. The attack first:
// the README's shared key (role virtualcluster, every project) pointed carol's instance at evil.example.com, and
// carol's next kubeconfig sent her token there. A key with the role virtualcluster writes only the instances that
// name its owner in spec.runtime (set when it registers one), only their status, audit events and the registration
// fields still empty; the access point, once set, is moved by the project's owners and admins only.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { API, AuthClient, type Reply } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const V1 = "management.platform.sh/v1";
const NAMESPACE = "p-tenant-c";
const INSTANCES = `${API}/namespaces/${NAMESPACE}/virtualclusterinstances`;
const MERGE = "application/merge-patch+json";
const RUNTIME_SCOPE = { roles: [{ role: "virtualcluster", projects: ["*"] }] };
const ingress = (host: string) => ({ template: { accessPoint: { ingress: { enabled: true, host } } } });

describe("instance writes are bound to their runtime", () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  /** Keys by holder: carol owns tenant-c, dave edits in it; shared and rotated are the admin's runtime keys. */
  const keys: Record<string, string> = {};

  const patch = (token: string, name: string, body: unknown, subresource = "") =>
    client.send("PATCH", `${INSTANCES}/${name}${subresource}`, { token, contentType: MERGE, body });
  const read = async (name: string) => (await client.send("GET", `${INSTANCES}/${name}`, { token: admin })).json();
  const create = (token: string, name: string, spec: Record<string, unknown>) =>
    client.send("POST", INSTANCES, {
      token,
      body: { apiVersion: V1, kind: "VirtualClusterInstance", metadata: { name }, spec },
    });
  const refused = (reply: Reply, reason: RegExp) => {
    assert.equal(reply.status, 403, reply.body);
    assert.match(reply.json().message, reason);
  };

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    admin = platform.adminKey;
    for (const user of ["carol", "dave"]) {
      await client.createUser(admin, user);
      keys[user] = await client.createKey(admin, `key-${user}`, { user });
    }
    const project = await client.send("POST", `${API}/projects`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "Project",
        metadata: { name: "tenant-c" },
        spec: { owner: { user: "carol" }, members: [{ kind: "User", name: "dave", clusterRole: "edit" }] },
      },
    });
    assert.equal(project.status, 201, project.body);
    keys.shared = await client.createKey(admin, "shared-vc-key", { user: "admin", scope: RUNTIME_SCOPE });
    keys.rotated = await client.createKey(admin, "shared-vc-key-2", { user: "admin", scope: RUNTIME_SCOPE });
    keys.carolRuntime = await client.createKey(keys.carol, "carol-vc-key", {
      user: "carol",
      scope: { roles: [{ role: "virtualcluster", projects: ["tenant-c"] }] },
    });
    const made = await create(keys.carol, "carol-vc", { external: true, ...ingress("carol-vc.example.test") });
    assert.equal(made.status, 201, made.body);
  });
  after(async () => {
    client?.close();
    await platform?.stop();
  });

  it("the shared key cannot point carol's instance elsewhere, nor write its status or audit events", async () => {
    assert.deepEqual((await read("carol-vc")).spec.runtime, { user: "carol" }, "bound to its creator");
    const bound =
      /virtual cluster instance p-tenant-c\/carol-vc reports through the runtime keys of user "carol" \(spec\.runtime\), and this access key belongs to user "admin"/;
    refused(await patch(keys.shared, "carol-vc", { spec: ingress("evil.example.com") }), bound);
    refused(await patch(keys.shared, "carol-vc", { status: { serverCertificateAuthority: "evil" } }, "/status"), bound);
    const current = await read("carol-vc");
    current.spec.template.accessPoint.ingress.host = "evil.example.com";
    refused(await client.send("PUT", `${INSTANCES}/carol-vc`, { token: keys.shared, body: current }), bound);
    const forged = await client.send("POST", `${INSTANCES}/carol-vc/auditevents`, {
      token: keys.shared,
      body: { apiVersion: V1, kind: "AuditEventBatch", events: [{ auditID: "forged", stage: "ResponseComplete" }] },
    });
    refused(forged, bound);

    const kubeconfig = await client.send("POST", `${INSTANCES}/carol-vc/kubeconfig`, {
      token: keys.carol,
      body: { apiVersion: V1, kind: "VirtualClusterInstanceKubeConfig", spec: {} },
    });
    assert.equal(kubeconfig.status, 201, kubeconfig.body);
    assert.equal(
      parse(kubeconfig.json().status.kubeConfig).clusters[0].cluster.server,
      "https://carol-vc.example.test",
    );
    assert.equal((await read("carol-vc")).status.serverCertificateAuthority, undefined);
  });

  it("carol's own runtime key reports for her instance; it cannot move the access point or rebind it", async () => {
    const reported = await patch(
      keys.carolRuntime,
      "carol-vc",
      { status: { online: true, phase: "Ready" } },
      "/status",
    );
    assert.equal(reported.status, 200, reported.body);
    refused(
      await patch(keys.carolRuntime, "carol-vc", { spec: ingress("carol-vc-2.example.test") }),
      /writes its instance's status and fills in what registration left empty: spec\.template\.accessPoint\.ingress\.host is set already/,
    );
    refused(
      await patch(keys.carolRuntime, "carol-vc", { spec: { displayName: "renamed" } }),
      /spec\.displayName is written by the project's members, not by a runtime/,
    );
    refused(await patch(keys.carolRuntime, "carol-vc", { metadata: { labels: { a: "b" } } }), /metadata\.labels/);
  });

  it("a runtime registers its instance bound to its key's owner, and keeps reporting with a rotated key", async () => {
    const spec = { external: true, clusterRef: { namespace: "team-a", virtualCluster: "shared-vc" } };
    refused(
      await create(keys.shared, "shared-vc", { ...spec, runtime: { user: "carol" } }),
      /making user "carol" the reporting runtime needs it/,
    );
    const registered = await create(keys.shared, "shared-vc", spec);
    assert.equal(registered.status, 201, registered.body);
    assert.deepEqual(registered.json().spec.runtime, { user: "admin" }, "bound to the key's owner");
    // Registration may fill in what it left empty (the access point), but not change what is set.
    const filled = await patch(keys.shared, "shared-vc", { spec: ingress("127.0.0.1:9443") });
    assert.equal(filled.status, 200, filled.body);
    refused(await patch(keys.shared, "shared-vc", { spec: ingress("127.0.0.1:9444") }), /is set already/);
    refused(
      await patch(keys.shared, "shared-vc", { spec: { clusterRef: { namespace: "elsewhere" } } }),
      /spec\.clusterRef\.namespace is set already/,
    );
    for (const key of [keys.shared, keys.rotated]) {
      const beat = await patch(
        key,
        "shared-vc",
        { status: { online: true, lastHeartbeatTime: "2030-01-01T00:00:00Z" } },
        "/status",
      );
      assert.equal(beat.status, 200, beat.body);
    }
    refused(
      await patch(keys.carolRuntime, "shared-vc", { status: { online: false } }, "/status"),
      /reports through the runtime keys of user "admin"/,
    );
  });

  it("the access point once set moves only for the project's owners and admins; the first one anyone may set", async () => {
    refused(
      await patch(keys.dave, "carol-vc", { spec: ingress("dave.example.test") }),
      /User "dave" cannot change spec\.template\.accessPoint\.ingress\.host: kubeconfigs of the instance send their credentials there/,
    );
    const plain = await create(keys.dave, "dave-vc", {});
    assert.equal(plain.status, 201, plain.body);
    assert.equal((await patch(keys.dave, "dave-vc", { spec: ingress("dave-vc.example.test") })).status, 200);
    refused(
      await patch(keys.dave, "dave-vc", { spec: ingress("dave-vc-2.example.test") }),
      /User "dave" cannot change/,
    );
    const moved = await patch(keys.carol, "dave-vc", { spec: ingress("dave-vc-2.example.test") });
    assert.equal(moved.status, 200, moved.body);
    const disabled = await patch(admin, "dave-vc", {
      spec: { template: { accessPoint: { ingress: { enabled: false } } } },
    });
    assert.equal(disabled.status, 200, disabled.body);
    assert.equal((await read("dave-vc")).spec.template.accessPoint.ingress.host, "dave-vc-2.example.test");
  });

  it("naming another runtime owner needs makeowner: not the project owner, an admin", async () => {
    refused(
      await patch(keys.carol, "carol-vc", { spec: { runtime: { user: "dave" } } }),
      /making user "dave" the reporting runtime needs it/,
    );
    const rebound = await patch(admin, "carol-vc", { spec: { runtime: { user: "dave" } } });
    assert.equal(rebound.status, 200, rebound.body);
    refused(
      await patch(keys.carolRuntime, "carol-vc", { status: { online: true } }, "/status"),
      /reports through the runtime keys of user "dave"/,
    );
  });

  it("an instance that names no runtime is written by no runtime key, and the denial says who fixes it", async () => {
    const unbound = await patch(admin, "shared-vc", { spec: { runtime: null } });
    assert.equal(unbound.status, 200, unbound.body);
    refused(
      await patch(keys.shared, "shared-vc", { status: { online: true } }, "/status"),
      /names no runtime that reports for it \(spec\.runtime\): a platform admin sets it/,
    );
  });
});
