import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientKey } from "./client-address.ts";

describe("clientKey()", () => {
  it("clientKey() writes IPv4-mapped IPv6 as IPv4 and takes IPv6 by its /64", () => {
    assert.equal(clientKey("127.0.0.2"), "127.0.0.2");
    assert.equal(clientKey("::ffff:10.1.2.3"), "10.1.2.3");
    assert.equal(clientKey("2001:db8:0:1::5"), "2001:db8:0:1::/64");
    assert.equal(clientKey("2001:0db8:0000:0001:ffff::9%eth0"), "2001:db8:0:1::/64");
    assert.equal(clientKey("::1"), "0:0:0:0::/64");
    assert.equal(clientKey(undefined), "unknown");
  });
});
