// Cleanup of what a virtual cluster syncs to its host, with the real CLI (`create`, `pause`, `delete`) against a host
// API server process (issue 32 item 9): `create` makes the virtual cluster's own Service, which owns every synced
// object, so the host's garbage collector removes them when it goes; `delete` of a multi-namespace virtual cluster
// removes its host namespaces and everything in them, and says how much it removed.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliRun, runCli, stopBackgroundRuntime } from "./support/cli-run.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { waitFor } from "./support/wait-for.ts";

const root = mkdtempSync(join(tmpdir(), "vc-cli-cleanup-"));
const home = join(root, ".virtualcluster");
const MANAGED = (name: string) => `virtualcluster.platform.sh/managed-by=${name}`;

function cli(args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, VIRTUALCLUSTER_HOME: home, HOME: root, LOG_LEVEL: "info" };
  for (const name of ["KUBECONFIG", "LICENSE", "NO_COLOR", "CI"]) delete env[name];
  return runCli(args, { env });
}

const assertOk = (run: CliRun) => assert.equal(run.code, 0, `${run.stdout}${run.stderr}`);

const workload = (namespace: string) => `
apiVersion: v1
kind: Service
metadata: {name: db, namespace: ${namespace}}
spec: {ports: [{name: pg, port: 5432}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: ${namespace}}
subsets: [{addresses: [{ip: 10.6.0.1}], ports: [{name: pg, port: 5432}]}]
`;

describe("cleanup of synced host objects", { skip: kubectlSkip, timeout: 300_000 }, () => {
  let host: ClusterApiServerProcess;
  let hostctl: Kubectl;
  const virtualctl = (namespace: string, name: string) =>
    new Kubectl(join(home, "clusters", namespace, name, "admin.kubeconfig"));
  const managedNames = async (kind: string, namespace: string, name: string) =>
    (await hostctl.ok(["-n", namespace, "get", kind, "-l", MANAGED(name), "-o", "name"])).trim();

  before(async () => {
    host = await startClusterApiServerProcess();
    hostctl = new Kubectl(host.kubeconfig);
  });
  after(async () => {
    for (const [namespace, name] of [
      ["team-one", "one"],
      ["team-multi", "multi"],
    ])
      stopBackgroundRuntime(join(home, "clusters", namespace, name));
    await host?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("create makes the owner of every synced object, so the host's garbage collector removes them with it", async () => {
    assertOk(await cli(["create", "one", "-n", "team-one", "--host-kubeconfig", host.kubeconfig]));
    const owner = JSON.parse(await hostctl.ok(["-n", "team-one", "get", "service", "one", "-o", "json"]));
    assert.equal(owner.metadata.labels["app.kubernetes.io/managed-by"], "virtualcluster-cli");
    await virtualctl("team-one", "one").ok(["apply", "-f", "-"], workload("default"));
    await waitFor(
      async () => (await managedNames("endpoints", "team-one", "one")) !== "",
      "the synced Endpoints on the host",
    );
    for (const kind of ["services", "endpoints"]) {
      const items = JSON.parse(
        await hostctl.ok(["-n", "team-one", "get", kind, "-l", MANAGED("one"), "-o", "json"]),
      ).items;
      for (const item of items) {
        assert.deepEqual(
          item.metadata.ownerReferences.map((ref: { kind: string; name: string; uid: string }) => [
            ref.kind,
            ref.name,
            ref.uid,
          ]),
          [["Service", "one", owner.metadata.uid]],
        );
      }
    }
    // With the virtual cluster paused (nothing syncs), deleting its Service on the host cleans up after it.
    assertOk(await cli(["pause", "one", "-n", "team-one"]));
    await hostctl.ok(["-n", "team-one", "delete", "service", "one"]);
    await waitFor(
      async () =>
        (await managedNames("endpoints", "team-one", "one")) === "" &&
        (await managedNames("services", "team-one", "one")) === "",
      "the garbage collector to remove the synced objects",
    );
    assertOk(await cli(["delete", "one", "-n", "team-one"]));
  });

  it("delete of a multi-namespace virtual cluster removes its host namespaces and what they hold", async () => {
    const settings = join(root, "multi.yaml");
    writeFileSync(settings, "sync:\n  toHost:\n    namespaces:\n      enabled: true\n");
    assertOk(await cli(["create", "multi", "-n", "team-multi", "-f", settings, "--host-kubeconfig", host.kubeconfig]));
    const virtual = virtualctl("team-multi", "multi");
    await virtual.ok(["create", "namespace", "apps"]);
    await virtual.ok(["apply", "-f", "-"], workload("apps"));
    let hostNamespace = "";
    await waitFor(async () => {
      const selector = `${MANAGED("multi")},virtualcluster.platform.sh/namespace=apps`;
      hostNamespace = (await hostctl.ok(["get", "namespaces", "-l", selector, "-o", "name"])).trim();
      return hostNamespace !== "" && (await managedNames("endpoints", hostNamespace.split("/")[1], "multi")) !== "";
    }, "the host namespace with the synced objects");
    const namespace = hostNamespace.split("/")[1];
    const home = JSON.parse(await hostctl.ok(["get", "namespace", "team-multi", "-o", "json"]));
    const synced = JSON.parse(await hostctl.ok(["get", "namespace", namespace, "-o", "json"]));
    assert.deepEqual(
      synced.metadata.ownerReferences?.map((ref: { kind: string; uid: string }) => [ref.kind, ref.uid]),
      [["Namespace", home.metadata.uid]],
      "owned by the virtual cluster's own namespace",
    );

    const run = await cli(["delete", "multi", "-n", "team-multi"]);
    assertOk(run);
    const removed = Number(/removed (\d+) synced host object\(s\)/.exec(run.stdout)?.[1]);
    assert.ok(removed >= 6, `${run.stdout}: the Service, the Endpoints, their namespace, the other namespaces`);
    await waitFor(async () => {
      const found = await hostctl.run(["get", "namespace", namespace, "-o", "json"]);
      return found.code !== 0 || JSON.parse(found.stdout).status?.phase === "Terminating";
    }, "the host namespace to be deleted");
    await waitFor(async () => (await managedNames("endpoints", namespace, "multi")) === "", "its content gone");
  });
});
