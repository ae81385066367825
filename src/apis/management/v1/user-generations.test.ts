import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { User } from "./user.ts";
import {
  carryGenerations,
  SESSION_GENERATION_ANNOTATION,
  sessionGeneration,
  startSessionGeneration,
  tokenGenerationErrors,
} from "./user-generations.ts";

const user = (spec: User["spec"], session?: string): User => ({
  apiVersion: "management.platform.sh/v1",
  kind: "User",
  metadata: {
    name: "bob",
    ...(session === undefined ? {} : { annotations: { [SESSION_GENERATION_ANNOTATION]: session } }),
  },
  spec,
});

describe("user generations", () => {
  it("carryGenerations() raises the session generation when the user is disabled, and only then", () => {
    const disabled = user({ disabled: true });
    carryGenerations(disabled, user({}, "2"));
    assert.equal(sessionGeneration(disabled), 3);
    const still = user({ disabled: true });
    carryGenerations(still, disabled);
    assert.equal(sessionGeneration(still), 3, "staying disabled raises nothing");
    const enabled = user({ disabled: false });
    carryGenerations(enabled, still);
    assert.equal(sessionGeneration(enabled), 3, "enabling again brings no session back");
  });

  it("carryGenerations() keeps the stored session generation when a write lowers or drops it, and takes a raise", () => {
    for (const asked of [undefined, "0", "1", "-4", "x"]) {
      const next = user({}, asked);
      carryGenerations(next, user({}, "5"));
      assert.equal(sessionGeneration(next), 5, String(asked));
    }
    const raised = user({}, "9");
    carryGenerations(raised, user({}, "5"));
    assert.equal(sessionGeneration(raised), 9);
  });

  it("carryGenerations() keeps spec.tokenGeneration when an update leaves it out", () => {
    const next = user({ displayName: "Bob" });
    carryGenerations(next, user({ tokenGeneration: 4 }));
    assert.equal(next.spec?.tokenGeneration, 4);
  });

  it("startSessionGeneration() starts a new user at 0 whatever the create says", () => {
    const created = user({}, "7");
    startSessionGeneration(created);
    assert.equal(sessionGeneration(created), 0);
    assert.equal(created.metadata.annotations, undefined);
  });

  it("tokenGenerationErrors() refuses lowering spec.tokenGeneration, naming the field and the stored value", () => {
    assert.deepEqual(tokenGenerationErrors(user({ tokenGeneration: 3 }), user({ tokenGeneration: 2 })), []);
    assert.deepEqual(tokenGenerationErrors(user({ tokenGeneration: 2 }), user({ tokenGeneration: 2 })), []);
    const [error] = tokenGenerationErrors(user({ tokenGeneration: 1 }), user({ tokenGeneration: 2 }));
    assert.equal(error.field, "spec.tokenGeneration");
    assert.match(error.detail ?? "", /may only be raised \(it is 2\)/);
  });
});
