import assert from "node:assert/strict";
import { test } from "node:test";
import { multiNamespaceNames, singleNamespaceNames } from "./names.ts";

test("singleNamespaceNames() translates names into the one host namespace", () => {
  const names = singleNamespaceNames("my-vcluster", "vc-host");
  assert.equal(names.hostName("nginx", "default"), "nginx-x-default-x-my-vcluster");
  assert.equal(
    names.hostName("a".repeat(40), "default"),
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-x-default-x-7799225210",
  );
  assert.equal(names.hostNamespace("default"), "vc-host");
  assert.equal(names.hostNamespace("kube-system"), "vc-host");
});

test("singleNamespaceNames() translates an empty name to an empty name", () => {
  assert.equal(singleNamespaceNames("vc", "ns").hostName("", "default"), "");
});

test("singleNamespaceNames() reverses a name given the virtual namespace, not a hashed one", () => {
  const names = singleNamespaceNames("vc", "host");
  assert.deepEqual(names.virtualName("nginx-x-default-x-vc", "host", "default"), {
    name: "nginx",
    namespace: "default",
  });
  assert.equal(names.virtualName("nginx-x-default-x-vc", "other", "default"), undefined);
  assert.equal(names.virtualName("nginx-x-default-x-vc", "host", "prod"), undefined);
  const hashed = names.hostName("b".repeat(60), "default");
  assert.equal(names.virtualName(hashed, "host", "default"), undefined);
});

test("singleNamespaceNames() asks the lookup before guessing", () => {
  const names = singleNamespaceNames("vc", "host", (name) =>
    name === "h" ? { name: "v", namespace: "n" } : undefined,
  );
  assert.deepEqual(names.virtualName("h", "host"), { name: "v", namespace: "n" });
});

test("multiNamespaceNames() keeps names and maps each namespace to its own host namespace", () => {
  const names = multiNamespaceNames("vc", "host");
  assert.equal(names.hostName("nginx", "default"), "nginx");
  const a = names.hostNamespace("default");
  const b = names.hostNamespace("prod");
  assert.match(a, /^virtualcluster-[0-9a-f]{8}-[0-9a-f]{8}$/);
  assert.notEqual(a, b);
  assert.equal(a.slice(-8), b.slice(-8));
  assert.notEqual(multiNamespaceNames("other", "host").hostNamespace("default"), a);
  assert.deepEqual(names.virtualName("nginx", a, "default"), { name: "nginx", namespace: "default" });
  assert.equal(names.virtualName("nginx", a, "prod"), undefined);
});
