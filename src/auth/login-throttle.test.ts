import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LoginThrottle } from "./login-throttle.ts";

describe("LoginThrottle", () => {
  const clock = { now: 1_000_000 };
  const make = () => new LoginThrottle({ failuresPerUsername: 3, failuresPerAddress: 5, now: () => clock.now });

  it("retryAfter() lets a few failures pass, then doubles the wait per failure", () => {
    const throttle = make();
    for (let i = 0; i < 3; i++) {
      assert.equal(throttle.retryAfter("bob", "10.0.0.1"), 0);
      throttle.failed("bob", "10.0.0.1");
    }
    assert.equal(throttle.retryAfter("bob", "10.0.0.1"), 1);
    clock.now += 1000;
    assert.equal(throttle.retryAfter("bob", "10.0.0.1"), 0);
    throttle.failed("bob", "10.0.0.1");
    assert.equal(throttle.retryAfter("bob", "10.0.0.1"), 2);
    // Another username from another address is not affected.
    assert.equal(throttle.retryAfter("carol", "10.0.0.2"), 0);
  });

  it("retryAfter() throttles one address trying many usernames", () => {
    const throttle = make();
    for (let i = 0; i < 5; i++) throttle.failed(`user${i}`, "10.0.0.9");
    assert.ok(throttle.retryAfter("someone-new", "10.0.0.9") > 0);
    assert.equal(throttle.retryAfter("someone-new", "10.0.0.10"), 0);
  });

  it("succeeded() clears the username's failures; quiet time forgets them", () => {
    const throttle = make();
    for (let i = 0; i < 4; i++) throttle.failed("dave", undefined);
    assert.ok(throttle.retryAfter("dave", undefined) > 0);
    throttle.succeeded("dave");
    assert.equal(throttle.retryAfter("dave", undefined), 0);
    for (let i = 0; i < 4; i++) throttle.failed("erin", undefined);
    clock.now += 2 * 3600 * 1000;
    assert.equal(throttle.retryAfter("erin", undefined), 0);
  });

  it("onChange() hears every failure, and a success only when it cleared a count", () => {
    const throttle = make();
    const heard: string[] = [];
    throttle.onChange((change) => heard.push(`${change.counter}:${change.id}:${change.failed}`));
    throttle.succeeded("frank");
    throttle.failed("frank", "10.0.0.3");
    throttle.succeeded("frank");
    throttle.succeeded("frank");
    assert.deepEqual(heard, ["username:frank:true", "address:10.0.0.3:true", "username:frank:false"]);
  });

  it("failed() keeps memory bounded", () => {
    const throttle = new LoginThrottle({ failuresPerUsername: 1, maxEntries: 100, now: () => clock.now });
    for (let i = 0; i < 1000; i++) throttle.failed(`u${i}`, undefined);
    throttle.failed("u999", undefined);
    assert.ok(throttle.retryAfter("u999", undefined) > 0);
    assert.equal(throttle.retryAfter("u0", undefined), 0);
  });
});
