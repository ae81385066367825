import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TunnelOpenLimit } from "./tunnel-open-limit.ts";

describe("TunnelOpenLimit", () => {
  it("TunnelOpenLimit.take() allows a burst, then one open per refill, saying how long to wait", () => {
    let now = 0;
    const limit = new TunnelOpenLimit({ burst: 3, refillMs: 2000, now: () => now });
    for (let i = 0; i < 3; i++) assert.equal(limit.take("edge"), 0, `open ${i + 1} of the burst`);
    assert.equal(limit.take("edge"), 2, "the fourth waits for a token");
    now += 1000;
    assert.equal(limit.take("edge"), 1, "half a token later: one more second");
    now += 1000;
    assert.equal(limit.take("edge"), 0, "a whole token later: allowed");
    assert.equal(limit.take("edge"), 2);
  });

  it("TunnelOpenLimit.take() counts each cluster on its own", () => {
    const limit = new TunnelOpenLimit({ burst: 1, refillMs: 60_000, now: () => 0 });
    assert.equal(limit.take("rogue"), 0);
    assert.equal(limit.take("rogue"), 60);
    assert.equal(limit.take("edge"), 0, "another cluster's loop takes nothing from edge");
  });

  it("TunnelOpenLimit.take() refills a quiet cluster to its burst and no further", () => {
    let now = 0;
    const limit = new TunnelOpenLimit({ burst: 2, refillMs: 1000, now: () => now });
    assert.equal(limit.take("edge"), 0);
    now += 3_600_000;
    assert.equal(limit.take("edge"), 0);
    assert.equal(limit.take("edge"), 0);
    assert.notEqual(limit.take("edge"), 0, "an hour's quiet is worth the burst, not an hour of opens");
  });
});
