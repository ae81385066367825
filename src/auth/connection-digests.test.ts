import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConnectionDigests } from "./connection-digests.ts";

describe("ConnectionDigests", () => {
  const counting = () => {
    const calls: string[] = [];
    const digests = new ConnectionDigests((token) => {
      calls.push(token);
      return `digest(${token})`;
    });
    return { calls, digests };
  };

  it("digest() computes once per connection while it presents the same token", () => {
    const { calls, digests } = counting();
    const connection = {};
    for (let i = 0; i < 3; i++) assert.equal(digests.digest("key-a", connection), "digest(key-a)");
    assert.deepEqual(calls, ["key-a"]);
  });

  it("digest() computes again when the connection presents another token, of any length", () => {
    const { calls, digests } = counting();
    const connection = {};
    assert.equal(digests.digest("key-a", connection), "digest(key-a)");
    assert.equal(digests.digest("key-b", connection), "digest(key-b)");
    assert.equal(digests.digest("key-bb", connection), "digest(key-bb)");
    assert.equal(digests.digest("key-b", connection), "digest(key-b)");
    assert.deepEqual(calls, ["key-a", "key-b", "key-bb", "key-b"]);
  });

  it("digest() never shares a token's digest between connections, and computes without one", () => {
    const { calls, digests } = counting();
    assert.equal(digests.digest("key-a", {}), "digest(key-a)");
    assert.equal(digests.digest("key-a", {}), "digest(key-a)");
    assert.equal(digests.digest("key-a", undefined), "digest(key-a)");
    assert.equal(calls.length, 3);
  });
});
