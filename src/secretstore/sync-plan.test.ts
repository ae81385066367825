import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { planSync } from "./sync-plan.ts";

const data = { password: "a" };

describe("planSync()", () => {
  it("planSync() writes a secret the store does not hold, whatever was agreed before", () => {
    assert.deepEqual(planSync({ generation: 1, data }, undefined), { action: "push" });
    assert.deepEqual(planSync({ generation: 2, observedGeneration: 2, agreedVersion: 3, data }, undefined), {
      action: "push",
    });
  });

  it("planSync() pushes a platform change with check-and-set on the agreed version, and does nothing when agreed", () => {
    assert.deepEqual(planSync({ generation: 3, observedGeneration: 2, agreedVersion: 4, data }, { version: 4, data }), {
      action: "push",
      cas: 4,
    });
    assert.deepEqual(planSync({ generation: 2, observedGeneration: 2, agreedVersion: 4, data }, { version: 4, data }), {
      action: "none",
    });
  });

  it("planSync() lets the store win: a newer store version replaces the platform's values, changed or not", () => {
    const store = { version: 5, data: { password: "b" } };
    assert.deepEqual(planSync({ generation: 2, observedGeneration: 2, agreedVersion: 4, data }, store), {
      action: "pull",
      version: 5,
      data: { password: "b" },
      overwrote: false,
      changed: true,
    });
    const conflict = planSync({ generation: 3, observedGeneration: 2, agreedVersion: 4, data }, store);
    assert.equal(conflict.action, "pull");
    assert.equal(conflict.action === "pull" && conflict.overwrote, true);
  });

  it("planSync() on a first sync with a store that already holds the secret takes the store's values", () => {
    const plan = planSync({ generation: 1, data }, { version: 2, data: { password: "vault" } });
    assert.deepEqual(plan, { action: "pull", version: 2, data: { password: "vault" }, overwrote: true, changed: true });
    const same = planSync({ generation: 1, data }, { version: 2, data });
    assert.equal(same.action === "pull" && same.changed, false);
  });
});
