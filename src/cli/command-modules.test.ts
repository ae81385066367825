import assert from "node:assert/strict";
import { test } from "node:test";
import { modulesLoadedBy } from "../utils/testing-module-graph.ts";

// @kubernetes/client-node's module graph alone costs a process about a second of CPU: the commands that reach a host
// cluster load it only for a kubeconfig that needs it (exec plugins, auth providers, proxies: kube-access.ts).
for (const command of ["create-action", "delete-action", "connect"]) {
  test(`the ${command} command's module does not load @kubernetes/client-node`, () => {
    const loaded = modulesLoadedBy(`./cli/${command}.ts`);
    assert.ok(loaded.some((url) => url.endsWith("/src/virtualcluster/kube/kube-access.ts")));
    assert.deepEqual(
      loaded.filter((url) => url.includes("/node_modules/@kubernetes/client-node/")),
      [],
    );
  });
}
