import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeSelf } from "./describe-self.ts";

describe("describe self", () => {
  it("describeSelf() names the user or team the key belongs to", () => {
    assert.equal(
      describeSelf({ status: { user: { name: "admin", username: "admin", displayName: "Admin" } } }),
      "user admin (Admin)",
    );
    assert.equal(describeSelf({ status: { user: { name: "u1", username: "bob" } } }), "user bob");
    assert.equal(describeSelf({ status: { team: { name: "ops" } } }), "team ops");
    assert.equal(describeSelf({ status: { subject: "system:x" } }), "subject system:x");
  });
});
