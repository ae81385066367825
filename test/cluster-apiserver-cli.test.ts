// `virtualcluster apiserver` as a process: it prints where admin.kubeconfig is, kubectl works with it, SIGTERM
// ends it cleanly, and a restart on the same data directory keeps objects and credentials.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { parse } from "yaml";
import { startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";

describe("virtualcluster apiserver", { skip: kubectlSkip }, () => {
  let dataDir: string;
  after(() => rm(dataDir, { recursive: true, force: true }));

  it("serves with admin.kubeconfig, stops on SIGTERM, and keeps its data across a restart", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vc-apiserver-cli-"));
    const first = await startClusterApiServerProcess({ dataDir });
    assert.equal(first.kubeconfig, join(dataDir, "admin.kubeconfig"));
    assert.match(first.stdout(), /Try: kubectl --kubeconfig \S+admin\.kubeconfig get namespaces/);
    const kubectl = new Kubectl(first.kubeconfig);
    assert.match(await kubectl.ok(["get", "namespaces"]), /kube-system\s+Active/);
    await kubectl.ok(
      ["apply", "-f", "-"],
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  namespace: default\ndata:\n  a: "1"\n',
    );
    const token = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
    assert.equal(await first.stop(), 0);

    const second = await startClusterApiServerProcess({ dataDir });
    try {
      assert.equal((await readFile(join(dataDir, "admin-token"), "utf8")).trim(), token);
      const again = new Kubectl(second.kubeconfig);
      assert.match(await again.ok(["get", "configmap", "kept", "-n", "default"]), /kept\s+1\s/);
      // default/kubernetes follows the new port.
      const endpoints = parse(await again.ok(["get", "endpoints", "kubernetes", "-n", "default", "-o", "yaml"]));
      assert.equal(endpoints.subsets[0].ports[0].port, Number(new URL(second.url).port));
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });
});
