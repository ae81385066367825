// The host informer against the real stand-alone API server, restarted under it (as a host restart does to a
// running syncer): the re-list reports what changed while it was down and then says it listed.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningClusterApiServer, startClusterApiServer } from "../../cluster-apiserver/cluster-api-server.ts";
import { loadKubeAccess } from "../kube/kube-access.ts";
import { KubeHttp } from "../kube/kube-http.ts";
import { Informer } from "./informer.ts";
import { createKubeClient, type KubeClient } from "./kube-client.ts";

describe("Informer against a host API server that restarts", () => {
  let dir: string;
  let server: RunningClusterApiServer;
  let client: KubeClient;
  let informer: Informer;
  /** What the informer reported, in order: `<event> <name>`, and `listed` after each list. */
  const reports: string[] = [];
  let lists = 0;
  let relisted: () => void = () => {};

  const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "b" } });
  const path = "/api/v1/namespaces/default/configmaps";

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vc-informer-"));
    server = await startClusterApiServer({ dataDir: dir, port: 0 });
    client = createKubeClient(await loadKubeAccess({ file: server.kubeconfigPath }));
  });
  after(async () => {
    await informer?.stop();
    await client?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("Informer() reports an object deleted while the host was down as deleted, then calls onListed", async () => {
    await client.http.request({ method: "POST", path, body: configMap("kept") });
    await client.http.request({ method: "POST", path, body: configMap("gone") });
    informer = new Informer({
      name: "test configmaps",
      client,
      path,
      onEvent: (event, object) => reports.push(`${event} ${object.metadata?.name}`),
      onListed: () => {
        reports.push("listed");
        if (++lists === 2) relisted();
      },
      retryBaseMs: 50,
    });
    informer.start();
    await informer.ready;
    assert.deepEqual(reports, ["add gone", "add kept", "listed"]);

    // The host goes down, "gone" is deleted meanwhile (through a server on the same data directory and another port,
    // which the informer never reaches), and the host comes back on its port: the informer lists again.
    const { port } = server;
    const relist = new Promise<void>((resolve) => {
      relisted = resolve;
    });
    await server.close();
    const offline = await startClusterApiServer({ dataDir: dir, port: 0 });
    const http = new KubeHttp(await loadKubeAccess({ file: offline.kubeconfigPath }));
    await http.request({ method: "DELETE", path: `${path}/gone` });
    http.close();
    await offline.close();
    reports.length = 0;
    server = await startClusterApiServer({ dataDir: dir, port });

    await relist;
    assert.equal(informer.get("default", "gone"), undefined);
    assert.deepEqual(reports, ["delete gone", "listed"], "the difference first, then the list");
  });
});
