import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { virtualclusterHome } from "./virtualcluster-home.ts";

describe("virtualcluster home", () => {
  it("virtualclusterHome() is VIRTUALCLUSTER_HOME when set, else ~/.virtualcluster", () => {
    assert.equal(virtualclusterHome({ VIRTUALCLUSTER_HOME: "/x/y" }), "/x/y");
    assert.match(virtualclusterHome({}), /[\\/]\.virtualcluster$/);
  });
});
