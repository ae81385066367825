import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually } from "./testing-eventually.ts";

test("eventually() returns once the condition holds", async () => {
  let looks = 0;
  await eventually(() => ++looks === 3, "the third look");
  assert.equal(looks, 3);
});

test("eventually() fails naming what it waited for once the limit passed", async () => {
  await assert.rejects(
    eventually(() => false, "a condition that never holds", { seconds: 0 }),
    {
      message: "timed out after 0 s waiting for a condition that never holds",
    },
  );
});

test("eventually() fails at once on an error, or counts it as not yet and reports the last one", async () => {
  const failing = () => {
    throw new Error("not written yet");
  };
  await assert.rejects(eventually(failing, "a file", { seconds: 60 }), { message: "not written yet" });
  await assert.rejects(eventually(failing, "a file", { seconds: 0, errorsMeanNotYet: true }), {
    message: "timed out after 0 s waiting for a file: Error: not written yet",
  });
});
