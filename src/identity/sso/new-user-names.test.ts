import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { freeUserNames, objectNameFor } from "./new-user-names.ts";

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

describe("freeUserNames()", () => {
  it("objectNameFor() takes a provider's name with a long run of dashes in one pass", () => {
    const name = objectNameFor(`a${"-".repeat(1_000_000)}A`, "user");
    assert.match(name, /^a-a-[0-9a-f]{8}$/);
    assert.match(objectNameFor(`--${"-".repeat(100_000)}`, "user"), /^user-[0-9a-f]{8}$/);
  });

  it("freeUserNames() suggests the provider's name first, then suffixes, skipping any taken name or username", () => {
    const taken = new Set(["admin", "admin-2", "carol"]);
    const [first, second] = freeUserNames("admin", taken);
    assert.deepEqual(first, { name: "admin-3", username: "admin-3" });
    assert.deepEqual(second, { name: "admin-4", username: "admin-4" });
    assert.deepEqual(freeUserNames("dave", taken).next().value, { name: "dave", username: "dave" });
  });

  it("freeUserNames() compares without case: Admin is as taken as admin", () => {
    assert.equal(freeUserNames("Admin", new Set(["admin"])).next().value?.username, "Admin-2");
  });

  it("freeUserNames() never yields a name or username that is taken, whatever the provider suggests", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 20 }),
        (name, list) => {
          const taken = new Set(list.map((t) => t.toLowerCase()));
          for (const candidate of freeUserNames(name, taken)) {
            assert.ok(!taken.has(candidate.name.toLowerCase()) && !taken.has(candidate.username.toLowerCase()));
            assert.match(candidate.name, /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
            assert.ok(candidate.name.length <= 63);
          }
        },
      ),
    );
  });
});
