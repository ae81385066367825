import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CommandError } from "./command-error.ts";
import { accessKeyBody } from "./platform-create.ts";

describe("accessKeyBody()", () => {
  it("accessKeyBody() is a User key named after NAME, with only the fields asked for", () => {
    assert.deepEqual(accessKeyBody("ci", { project: [] }), {
      apiVersion: "management.platform.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "ci" },
      spec: { type: "User", displayName: "ci" },
    });
    assert.deepEqual(accessKeyBody("ci", { project: [], user: "bob", displayName: "CI", expireAfter: 3600 }).spec, {
      type: "User",
      user: "bob",
      displayName: "CI",
      ttl: 3600,
    });
  });

  it("accessKeyBody() scopes --virtualcluster-role keys to all projects or the ones named", () => {
    assert.deepEqual(accessKeyBody("vc", { project: [], virtualclusterRole: true }).spec, {
      type: "User",
      displayName: "vc",
      scope: { roles: [{ role: "virtualcluster", projects: ["*"] }] },
    });
    assert.deepEqual(accessKeyBody("vc", { project: ["a", "b"], virtualclusterRole: true }).spec, {
      type: "User",
      displayName: "vc",
      scope: { roles: [{ role: "virtualcluster", projects: ["a", "b"] }] },
    });
  });

  it("accessKeyBody() refuses --project without --virtualcluster-role", () => {
    assert.throws(() => accessKeyBody("x", { project: ["a"] }), CommandError);
  });
});
