import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterGroups, objectNameFor } from "./sso-accounts.ts";

describe("objectNameFor()", () => {
  it("objectNameFor() keeps a valid name and makes any other text a DNS-1123 name with a hash of the original", () => {
    assert.equal(objectNameFor("alice", "user"), "alice");
    const odd = objectNameFor("Alice.Smith@Example.com", "user");
    assert.match(odd, /^alice-smith-example-com-[0-9a-f]{8}$/);
    assert.notEqual(objectNameFor("infra/db", "group"), objectNameFor("infra-db", "group"));
    assert.match(objectNameFor("###", "group"), /^group-[0-9a-f]{8}$/);
    const long = objectNameFor("x".repeat(100), "user");
    assert.ok(long.length <= 63, long);
    assert.match(long, /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
  });
});

describe("filterGroups()", () => {
  it("filterGroups() keeps every distinct group without filters, and only matches with them", () => {
    assert.deepEqual(filterGroups(["a", "b", "a", ""], []), ["a", "b"]);
    assert.deepEqual(filterGroups(["dev-web", "ops", "Dev-db"], ["^dev-", "(?i)^ops$"]), ["dev-web", "ops"]);
    assert.deepEqual(filterGroups(["Dev-db"], ["(?i)^dev-"]), ["Dev-db"]);
  });
});
