import assert from "node:assert/strict";
import { test } from "node:test";
import { virtualToHostDNS } from "./dns.ts";
import { multiNamespaceNames, singleNamespaceNames } from "./names.ts";

test("virtualToHostDNS() reproduces the example of the reference", () => {
  const names = singleNamespaceNames("vcluster", "vcluster-ns");
  assert.equal(
    virtualToHostDNS("nginx.default.svc.cluster.local", names),
    "nginx-x-default-x-vcluster.vcluster-ns.svc.cluster.local",
  );
});

test("virtualToHostDNS() accepts a name without cluster domain", () => {
  const names = singleNamespaceNames("vcluster", "vcluster-ns");
  assert.equal(virtualToHostDNS("nginx.default.svc", names), "nginx-x-default-x-vcluster.vcluster-ns.svc");
});

test("virtualToHostDNS() keeps names in multi-namespace mode", () => {
  const names = multiNamespaceNames("vcluster", "vcluster-ns");
  assert.equal(
    virtualToHostDNS("nginx.default.svc.cluster.local", names),
    `nginx.${names.hostNamespace("default")}.svc.cluster.local`,
  );
});

test("virtualToHostDNS() rejects names that are not service names", () => {
  const names = singleNamespaceNames("vc", "ns");
  for (const bad of ["nginx", "nginx.default", "nginx.default.pod", ".default.svc", "a..svc", "x".repeat(300)]) {
    assert.throws(() => virtualToHostDNS(bad, names), TypeError, bad);
  }
});
