import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientKey, LoginThrottle } from "./login-throttle.ts";

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
    assert.deepEqual(heard, [
      "pair:frank\n10.0.0.3:true",
      "username:frank:true",
      "address:10.0.0.3:true",
      "username:frank:false",
    ]);
  });

  it("retryAfter() throttles a username at the address that guesses it, not the real user elsewhere", () => {
    const throttle = new LoginThrottle({ now: () => clock.now });
    for (let i = 0; i < 50; i++)
      if (throttle.retryAfter("admin", "203.0.113.7") === 0) throttle.failed("admin", "203.0.113.7");
    assert.ok(throttle.retryAfter("admin", "203.0.113.7") > 0, "the guessing address waits");
    assert.equal(throttle.retryAfter("admin", "198.51.100.2"), 0, "the real user at another address does not");
    // Every address of one IPv6 /64 is one client.
    for (let i = 0; i < 5; i++) throttle.failed("admin", `2001:db8:1:2::${i + 1}`);
    assert.ok(throttle.retryAfter("admin", "2001:db8:1:2:ffff::9") > 0);
    assert.equal(throttle.retryAfter("admin", "2001:db8:1:3::1"), 0);
  });

  it("retryAfter() throttles a username for everyone only past the global cap, far above one address", () => {
    const throttle = new LoginThrottle({ failuresPerUsername: 100, now: () => clock.now });
    for (let address = 0; address < 20; address++) {
      for (let i = 0; i < 5; i++) throttle.failed("root", `10.1.0.${address}`);
    }
    assert.ok(throttle.retryAfter("root", "192.0.2.1") > 0, "100 failures from 20 addresses");
    throttle.succeeded("root", "192.0.2.1");
    assert.equal(throttle.retryAfter("root", "192.0.2.1"), 0);
  });

  it("clientKey() counts IPv4 (also mapped into IPv6) by address and IPv6 by /64", () => {
    assert.equal(clientKey("10.0.0.1"), "10.0.0.1");
    assert.equal(clientKey("::ffff:10.0.0.1"), "10.0.0.1");
    assert.equal(clientKey("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(clientKey("2001:0db8:0000:0000:ffff::1"), "2001:db8:0:0::/64");
    assert.equal(clientKey("::1"), "0:0:0:0::/64");
    assert.equal(clientKey("fe80::1%eth0"), "fe80:0:0:0::/64");
  });

  it("failed() keeps memory bounded", () => {
    const throttle = new LoginThrottle({ failuresPerUsername: 1, maxEntries: 100, now: () => clock.now });
    for (let i = 0; i < 1000; i++) throttle.failed(`u${i}`, undefined);
    throttle.failed("u999", undefined);
    assert.ok(throttle.retryAfter("u999", undefined) > 0);
    assert.equal(throttle.retryAfter("u0", undefined), 0);
  });
});
