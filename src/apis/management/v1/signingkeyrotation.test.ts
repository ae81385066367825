import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../apimachinery/types.ts";
import { statusErrorOf, testContext } from "../../../registry/testing.ts";
import { createSigningKeyRotationDefinition, type RotationAlgorithm } from "./signingkeyrotation.ts";

function setup(admin: boolean) {
  const rotations: RotationAlgorithm[] = [];
  const definition = createSigningKeyRotationDefinition({
    rotate: async (algorithm) => {
      rotations.push(algorithm);
      return { keyID: "new", algorithm, publishedKeyIDs: ["new", "old"] };
    },
    isAdmin: () => admin,
  });
  const create = (body: unknown) => definition.action!.handle({ context: testContext(), body: body as KubeObject });
  return { rotations, create };
}

const body = (spec: Record<string, unknown>) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "SigningKeyRotation",
  spec,
});

describe("SigningKeyRotation", () => {
  it("handle() rotates (ES256 by default) and answers keyID, algorithm and publishedKeyIDs", async () => {
    const { create, rotations } = setup(true);
    const response = (await create(body({}))) as KubeObject & { status: unknown };
    assert.equal(response.kind, "SigningKeyRotation");
    assert.deepEqual(response.status, { keyID: "new", algorithm: "ES256", publishedKeyIDs: ["new", "old"] });
    await create(body({ algorithm: "RS256" }));
    assert.deepEqual(rotations, ["ES256", "RS256"]);
  });

  it("handle() refuses unknown algorithms (422) and non-admins (403), rotating nothing", async () => {
    const admin = setup(true);
    const error = await statusErrorOf(admin.create(body({ algorithm: "HS256" })));
    assert.equal(error.code, 422);
    assert.match(error.message, /spec\.algorithm: Unsupported value: "HS256"/);
    const user = setup(false);
    const denied = await statusErrorOf(user.create(body({})));
    assert.equal(denied.code, 403);
    assert.match(denied.message, /only platform admins may/);
    assert.deepEqual([...admin.rotations, ...user.rotations], []);
  });
});
