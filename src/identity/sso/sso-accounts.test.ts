import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterGroups } from "./sso-accounts.ts";

describe("filterGroups()", () => {
  it("filterGroups() keeps every distinct group without filters, and only matches with them", () => {
    assert.deepEqual(filterGroups(["a", "b", "a", ""], []), ["a", "b"]);
    assert.deepEqual(filterGroups(["dev-web", "ops", "Dev-db"], ["^dev-", "(?i)^ops$"]), ["dev-web", "ops"]);
    assert.deepEqual(filterGroups(["Dev-db"], ["(?i)^dev-"]), ["Dev-db"]);
  });
});
