import assert from "node:assert/strict";
import { test } from "node:test";
import { MANAGED_BY_LABEL } from "./constants.ts";
import { createTranslator } from "./translator.ts";

test("createTranslator() defaults to single-namespace mode", () => {
  const t = createTranslator({ name: "vcluster", namespace: "vcluster-ns" });
  assert.equal(t.multiNamespace, false);
  assert.equal(t.hostName("nginx", "default"), "nginx-x-default-x-vcluster");
  assert.equal(t.hostNamespace("default"), "vcluster-ns");
  assert.equal(t.virtualToHostDNS("nginx.default.svc"), "nginx-x-default-x-vcluster.vcluster-ns.svc");
  assert.equal(t.hostLabels({ a: "b" }, "default")[MANAGED_BY_LABEL], "vcluster");
  assert.equal(t.virtualLabelKey(MANAGED_BY_LABEL), undefined);
});

test("createTranslator() in multi-namespace mode keeps names", () => {
  const t = createTranslator({ name: "vcluster", namespace: "vcluster-ns", multiNamespace: true });
  assert.equal(t.hostName("nginx", "default"), "nginx");
  assert.notEqual(t.hostNamespace("default"), "vcluster-ns");
  assert.deepEqual(t.virtualName("nginx", t.hostNamespace("default"), "default"), {
    name: "nginx",
    namespace: "default",
  });
});
