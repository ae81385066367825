import assert from "node:assert/strict";
import { test } from "node:test";
import { hasVirtualClusterRole, scopeReachesVirtualCluster } from "./scope-access.ts";

test("hasVirtualClusterRole() needs the role listed in scope.roles", () => {
  assert.equal(hasVirtualClusterRole({ roles: [{ role: "virtualcluster", projects: ["*"] }] }), true);
  assert.equal(hasVirtualClusterRole({ roles: [{ role: "platformCLI" }] }), false);
  assert.equal(hasVirtualClusterRole(undefined), false, "an unscoped key (even an admin's) cannot connect");
});

test("scopeReachesVirtualCluster() allows unscoped keys and matching projects or virtual clusters", () => {
  const target = { project: "default", name: "vc1" };
  assert.equal(scopeReachesVirtualCluster(undefined, target), true);
  assert.equal(scopeReachesVirtualCluster({ allowPlatformCli: false }, target), true);
  assert.equal(scopeReachesVirtualCluster({ projects: [{ project: "*" }] }, target), true);
  assert.equal(scopeReachesVirtualCluster({ projects: [{ project: "other" }] }, target), false);
  assert.equal(
    scopeReachesVirtualCluster({ virtualClusters: [{ project: "default", virtualCluster: "vc1" }] }, target),
    true,
  );
  assert.equal(
    scopeReachesVirtualCluster({ virtualClusters: [{ project: "default", virtualCluster: "vc2" }] }, target),
    false,
  );
  assert.equal(scopeReachesVirtualCluster({ roles: [{ role: "virtualcluster" }] }, target), false);
});
