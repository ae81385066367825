import assert from "node:assert/strict";
import { test } from "node:test";
import { needsSecretReaderRbac, platformRoleBindingName, platformRoleName, secretReaderRbac } from "./platform-rbac.ts";

test("platformRoleName() follows the reference and stays a valid name", () => {
  assert.equal(platformRoleName("vc1", "team-a"), "vc-vc1-v-team-a-platform-role");
  const long = platformRoleBindingName("a".repeat(30), "b".repeat(20));
  assert.ok(long.length <= 63);
  assert.ok(!long.endsWith("-"));
  assert.equal(
    platformRoleName("x".repeat(50), "abcdef"),
    `vc-${"x".repeat(50)}-v-abcdef`,
    "cut at 63, trailing - dropped",
  );
});

test("secretReaderRbac() grants get on the one Secret to the ServiceAccount vc-<name>", () => {
  const { role, binding } = secretReaderRbac({
    name: "vc1",
    namespace: "team-a",
    secretName: "shared-key",
    secretNamespace: "virtualcluster-platform",
  });
  assert.equal(role.metadata?.namespace, "virtualcluster-platform");
  assert.deepEqual(role.rules, [
    { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["shared-key"] },
  ]);
  assert.equal(binding.roleRef.name, role.metadata?.name);
  assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "vc-vc1", namespace: "team-a" }]);
});

test("needsSecretReaderRbac() only when asked and the Secret lives elsewhere", () => {
  assert.equal(needsSecretReaderRbac(true, "other", "own"), true);
  assert.equal(needsSecretReaderRbac(true, "own", "own"), false);
  assert.equal(needsSecretReaderRbac(false, "other", "own"), false);
});
