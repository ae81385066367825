// A virtual cluster (`virtualcluster run`, a real process syncing into a real host API server process) stops a patch
// that never converges and shows it where an operator looks: the SyncError event, status.json and /metrics.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoreV1Api } from "@kubernetes/client-node";
import { parse } from "yaml";
import { RUNTIME_NODE_FLAGS } from "../src/virtualcluster/runtime-node-flags.ts";
import { AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { kubeConfig } from "./support/kube-objects.ts";
import { type RuntimeProcess, startRuntimeProcess } from "./support/runtime-process.ts";
import { waitFor } from "./support/wait-for.ts";

const SETTINGS = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations.loop
          expression: String(context.hostObject?.metadata?.resourceVersion ?? 0)
`;

describe("a non-converging patch in a running virtual cluster", () => {
  let host: ClusterApiServerProcess;
  let vc: RuntimeProcess;

  before(async () => {
    host = await startClusterApiServerProcess();
    await kubeConfig(host.kubeconfig)
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: "loops" } } });
    vc = await startRuntimeProcess({
      name: "vc",
      namespace: "loops",
      settings: SETTINGS,
      hostKubeconfig: host.kubeconfig,
    });
  });
  after(async () => {
    await vc?.stop();
    await host?.stop();
  });

  it("runs as the process that was started, with the runtime's V8 flags (it re-executes itself with them)", () => {
    const commandLine = readFileSync(`/proc/${vc.child.pid}/cmdline`, "utf8").split("\0");
    for (const flag of RUNTIME_NODE_FLAGS) assert.ok(commandLine.includes(flag), commandLine.join(" "));
  });

  it("is stopped, with a SyncError event, in status.json and in /metrics", async () => {
    const virtual = kubeConfig(vc.kubeconfig).makeApiClient(CoreV1Api);
    await virtual.createNamespacedService({
      namespace: "default",
      body: { metadata: { name: "looping" }, spec: { ports: [{ port: 80 }] } },
    });
    await virtual.createNamespacedEndpoints({
      namespace: "default",
      body: {
        metadata: { name: "looping", annotations: { loop: "x" } },
        subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }],
      },
    });
    await waitFor(async () => (await vc.status()).syncer.notConverging === 1, "the stop in status.json");
    assert.equal((await vc.status()).syncer.stalled, 1);
    const events = await virtual.listNamespacedEvent({ namespace: "default" });
    assert.ok(events.items.some((event) => event.reason === "SyncError" && /rewritten/.test(event.message ?? "")));

    const admin = parse(readFileSync(join(vc.dataDir, "admin.kubeconfig"), "utf8"));
    const cluster = admin.clusters[0].cluster;
    const client = new AuthClient(
      cluster.server,
      Buffer.from(cluster["certificate-authority-data"], "base64").toString(),
    );
    try {
      const metrics = await client.send("GET", "/metrics", { token: admin.users[0].user.token });
      assert.equal(metrics.status, 200, metrics.body);
      assert.match(metrics.body, /^virtualcluster_syncer_not_converging_total 1$/m);
      assert.match(metrics.body, /^virtualcluster_syncer_stalled_objects 1$/m);
      assert.match(
        metrics.body,
        /^virtualcluster_syncer_writes_total\{side="host",kind="Endpoints",verb="update"\} \d+$/m,
      );
    } finally {
      client.agent.destroy();
    }
  });
});
