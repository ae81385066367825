import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SealedBox } from "./sealed-box.ts";

const SECRET = "k".repeat(43);

describe("SealedBox", () => {
  it("SealedBox.open() gives back what seal() sealed with the same binding, until it expires", () => {
    const clock = { now: 1_000_000 };
    const box = new SealedBox({ secrets: [SECRET], purpose: "test", now: () => clock.now });
    const sealed = box.seal({ returnPath: "/projects", n: 1 }, "state-1", clock.now + 600_000);
    assert.match(sealed, /^v1\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(box.open(sealed, "state-1"), { returnPath: "/projects", n: 1 });
    clock.now += 600_000;
    assert.equal(box.open(sealed, "state-1"), undefined, "expired");
  });

  it("SealedBox.open() refuses another binding, another purpose, another secret, and any change", () => {
    const box = new SealedBox({ secrets: [SECRET], purpose: "test" });
    const sealed = box.seal("value", "state-1", Date.now() + 60_000);
    assert.equal(box.open(sealed, "state-2"), undefined);
    assert.equal(new SealedBox({ secrets: [SECRET], purpose: "other" }).open(sealed, "state-1"), undefined);
    assert.equal(new SealedBox({ secrets: ["x".repeat(43)], purpose: "test" }).open(sealed, "state-1"), undefined);
    for (const bad of [undefined, "", "v1.", "v2.abc", sealed.slice(0, -2), `${sealed}A`, "v1.AAAA"]) {
      assert.equal(box.open(bad, "state-1"), undefined, String(bad));
    }
    fc.assert(
      fc.property(fc.nat({ max: sealed.length - 4 }), fc.constantFrom("A", "B", "_", "-"), (at, char) => {
        const index = 3 + at;
        const changed = sealed.slice(0, index) + char + sealed.slice(index + 1);
        if (changed !== sealed) assert.equal(box.open(changed, "state-1"), undefined);
      }),
    );
  });

  it("SealedBox opens with every secret it holds and seals with the first (a rotation)", () => {
    const old = new SealedBox({ secrets: [SECRET], purpose: "test" });
    const rotated = new SealedBox({ secrets: ["n".repeat(43), SECRET], purpose: "test" });
    const sealed = old.seal(7, "b", Date.now() + 60_000);
    assert.equal(rotated.open(sealed, "b"), 7);
    assert.equal(old.open(rotated.seal(8, "b", Date.now() + 60_000), "b"), undefined);
  });

  it("SealedBox.seal() never repeats itself for the same value", () => {
    const box = new SealedBox({ secrets: [SECRET], purpose: "test" });
    const until = Date.now() + 60_000;
    assert.notEqual(box.seal("same", "b", until), box.seal("same", "b", until));
  });
});
