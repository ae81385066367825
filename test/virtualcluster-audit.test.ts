// A virtual cluster's audit events reach its platform's datastore: `virtualcluster run` with an `audit` section
// logs its API server's requests to its own file and sends them over its platform connection; the platform stores
// them tagged with the instance under IDs qualified by it (`<namespace>.<name>.<auditID>`), searchable through
// auditevents, so a virtual cluster's key cannot pass an event off as one of the platform's.
// `disableAgentSyncBack: true` on the platform stops that. Every piece is a real process over HTTPS.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";

// biome-ignore lint/suspicious/noExplicitAny: assertions navigate the objects freely
type Json = Record<string, any>;

describe("virtual cluster audit events on the platform", { skip: kubectlSkip }, () => {
  let platform: PlatformProcess;
  let host: ClusterApiServerProcess;
  let client: AuthClient;
  let vc: RuntimeProcess;
  let vcctl: Kubectl;
  let runtimeKey: string;

  const setAudit = async (extra: string) => {
    const raw = `audit:\n  enabled: true\n  level: 1\n  path: audit.log\n${extra}`;
    const reply = await client.send("PATCH", `${API}/configs/platform-config`, {
      token: platform.adminKey,
      contentType: "application/merge-patch+json",
      body: { spec: { raw } },
    });
    assert.equal(reply.status, 200, reply.body);
  };
  const search = async (selector: string): Promise<Json[]> => {
    const reply = await client.send("GET", `${API}/auditevents?fieldSelector=${encodeURIComponent(selector)}`, {
      token: platform.adminKey,
    });
    assert.equal(reply.status, 200, reply.body);
    return reply.json().items;
  };

  before(async () => {
    [platform, host] = await Promise.all([startPlatformProcess(), startClusterApiServerProcess()]);
    client = new AuthClient(platform.url, platform.caPem);
    await setAudit("");
    const hostctl = new Kubectl(host.kubeconfig);
    await hostctl.ok(["create", "namespace", "team-audit"]);
    const key = await client.send("POST", `${API}/ownedaccesskeys`, {
      token: platform.adminKey,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: "audit-vc" },
        spec: {
          type: "User",
          user: "admin",
          displayName: "audit-vc",
          scope: { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] },
        },
      },
    });
    assert.equal(key.status, 201, key.body);
    runtimeKey = key.json().spec.key;
    await hostctl.ok(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "virtualcluster-platform-api-key", namespace: "team-audit" },
        stringData: {
          accessKey: key.json().spec.key,
          host: new URL(platform.url).host,
          certificateAuthorityData: platform.caPem,
        },
      }),
    );
    vc = await startRuntimeProcess({
      name: "audited",
      namespace: "team-audit",
      settings: "external:\n  platform: {}\naudit:\n  enabled: true\n  policy:\n    rules:\n    - level: Metadata\n",
      hostKubeconfig: host.kubeconfig,
    });
    vcctl = new Kubectl(vc.kubeconfig);
    await eventually(async () => (await vc.status()).platform?.connected === true, "the platform connection");
  });
  after(async () => {
    client?.close();
    await vc?.stop();
    await Promise.all([platform?.stop(), host?.stop()]);
  });

  /** The audit IDs of namespace creations in the virtual cluster's own log file. */
  const localCreates = async (): Promise<string[]> =>
    (await readFile(join(vc.dataDir, "audit", "audit.log"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((e) => e.verb === "create" && e.objectRef?.resource === "namespaces" && e.stage === "ResponseComplete")
      .map((e) => e.auditID);

  it("the virtual cluster's requests are in its own audit file and on the platform, tagged with the instance", async () => {
    await vcctl.ok(["create", "namespace", "audited-one"]);
    const instance = (await vc.status()).platform?.instance;
    assert.ok(instance, "connected to an instance");
    const tag = `${instance.namespace}/${instance.name}`;
    let auditId = "";
    await eventually(async () => {
      [auditId] = await localCreates();
      return auditId !== undefined;
    }, "the event in the virtual cluster's own file");
    const stored = `${instance.namespace}.${instance.name}.${auditId}`;
    let events: Json[] = [];
    await eventually(
      async () => {
        events = await search(`metadata.name=${stored}`);
        return events.some((event) => event.event.stage === "ResponseComplete");
      },
      `the virtual cluster's event on the platform (forwarding: ${JSON.stringify((await vc.status()).audit)})`,
    );
    const complete = events.find((event) => event.event.stage === "ResponseComplete")!;
    assert.equal(complete.instance, tag);
    assert.equal(complete.event.verb, "create");
    assert.equal(complete.event.responseStatus.code, 201);
    const tagged = await search(`instance=${tag},verb=create,objectRef.resource=namespaces`);
    assert.ok(
      tagged.some((event) => event.metadata.name === stored),
      "found by its instance",
    );
    assert.deepEqual(await search(`instance=,metadata.name=${stored}`), [], "not one of the platform's own events");
  });

  it("a virtual cluster's key cannot pass an event off as the platform's: its events get IDs of their own", async () => {
    const real = await client.send("GET", `${API}/users/admin`, { token: platform.adminKey });
    const platformId = String(real.headers["audit-id"]);
    const byId = () => client.send("GET", `${API}/auditevents/${platformId}`, { token: platform.adminKey });
    await eventually(async () => (await byId()).status === 200, "the platform's event stored");
    const instance = (await vc.status()).platform?.instance;
    assert.ok(instance, "connected to an instance");
    const intake = `${API}/namespaces/${instance.namespace}/virtualclusterinstances/${instance.name}/auditevents`;
    const forge = (auditID: string) =>
      client.send("POST", intake, {
        token: runtimeKey,
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "AuditEventBatch",
          events: [
            {
              kind: "Event",
              apiVersion: "audit.k8s.io/v1",
              level: "Metadata",
              auditID,
              stage: "ResponseComplete",
              verb: "delete",
              user: { username: "forger" },
              requestURI: "/apis/management.platform.sh/v1/users/admin",
              responseStatus: { code: 200 },
              requestReceivedTimestamp: new Date().toISOString(),
              stageTimestamp: new Date().toISOString(),
            },
          ],
        },
      });
    const accepted = await forge(platformId);
    assert.equal(accepted.status, 201, accepted.body);
    const qualified = `${instance.namespace}.${instance.name}.${platformId}`;
    await eventually(async () => (await search(`metadata.name=${qualified}`)).length > 0, "the forwarded event");
    const forwarded = (await search(`metadata.name=${qualified}`))[0];
    assert.equal(forwarded.instance, `${instance.namespace}/${instance.name}`);
    assert.equal(forwarded.event.user.username, "forger");

    const answer = (await byId()).json();
    assert.equal(answer.event.user.username, "admin", "the platform's record answers for its ID");
    assert.equal(answer.instance, undefined);
    const selected = await search(`metadata.name=${platformId}`);
    assert.ok(selected.length > 0);
    for (const event of selected) {
      assert.equal(event.instance, undefined, "a field selector on the ID finds the platform's events only");
      assert.equal(event.event.user.username, "admin");
    }
    const dotted = await forge(`${platformId}.x`);
    assert.equal(dotted.status, 400, dotted.body);
    assert.match(dotted.json().message, /events\[0\]\.auditID must be 1 to 128 letters, digits/);
  });

  it("disableAgentSyncBack: true stops the virtual cluster's events from reaching the platform", async () => {
    await setAudit("  disableAgentSyncBack: true\n");
    await vcctl.ok(["create", "namespace", "audited-two"]);
    await eventually(async () => (await vc.status()).audit?.syncBackDisabled === true, "the forwarder to stop");
    await vcctl.ok(["create", "namespace", "audited-three"]);
    // The log is written in the background: wait for the third create's line.
    let ids: string[] = [];
    await eventually(async () => {
      ids = await localCreates();
      return ids.length >= 3;
    }, "the third create in the virtual cluster's log");
    assert.equal(ids.length, 3, "the virtual cluster still keeps its own log");
    for (const id of ids.slice(1)) assert.deepEqual(await search(`metadata.name=${id}`), [], "not on the platform");
    assert.ok(((await vc.status()).audit?.discarded ?? 0) > 0);
  });
});
