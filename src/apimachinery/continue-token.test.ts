import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { decodeContinueToken, encodeContinueToken } from "./continue-token.ts";
import { isStatusError } from "./errors.ts";

const PREFIX = "/management.platform.sh/users//";

function forge(body: unknown): string {
  return Buffer.from(typeof body === "string" ? body : JSON.stringify(body)).toString("base64url");
}

function rejected(token: string, prefix = PREFIX): string {
  try {
    decodeContinueToken(token, prefix);
  } catch (error) {
    assert.ok(isStatusError(error), String(error));
    assert.equal(error.code, 400);
    assert.equal(error.reason, "BadRequest");
    assert.match(error.message, /^continue key is not valid: /);
    return error.message;
  }
  assert.fail("expected 400 BadRequest");
}

describe("continue tokens", () => {
  it("encodeContinueToken() writes upstream's shape in base64url", () => {
    const token = encodeContinueToken({ revision: 7, startAfter: `${PREFIX}alice` });
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(JSON.parse(Buffer.from(token, "base64url").toString()), {
      v: "meta.k8s.io/v1",
      rv: 7,
      start: `${PREFIX}alice`,
    });
  });

  it("decodeContinueToken() returns what was encoded", () => {
    const position = { revision: 42, startAfter: "/core/services/default/web" };
    assert.deepEqual(decodeContinueToken(encodeContinueToken(position), "/core/services/"), position);
    assert.deepEqual(decodeContinueToken(encodeContinueToken(position), "/core/services/default/"), position);
  });

  it("decodeContinueToken() accepts a prefix without a trailing slash at a segment boundary", () => {
    const position = { revision: 1, startAfter: "/core/services/default/web" };
    assert.deepEqual(decodeContinueToken(encodeContinueToken(position), "/core/services"), position);
    rejected(encodeContinueToken({ revision: 1, startAfter: "/core/servicesX/a" }), "/core/services");
  });

  const forged: [string, string, RegExp][] = [
    ["garbage", "!!!", /illegal base64/],
    ["not JSON", forge("hello"), /not a JSON document/],
    ["an array", forge([1]), /not a JSON object/],
    [
      "a wrong version",
      forge({ v: "v2", rv: 1, start: `${PREFIX}a` }),
      /server does not recognize this encoded version "v2"/,
    ],
    ["no version", forge({ rv: 1, start: `${PREFIX}a` }), /does not recognize/],
    [
      "a zero revision",
      forge({ v: "meta.k8s.io/v1", rv: 0, start: `${PREFIX}a` }),
      /incorrect encoded start resourceVersion/,
    ],
    ["a negative revision", forge({ v: "meta.k8s.io/v1", rv: -3, start: `${PREFIX}a` }), /resourceVersion/],
    ["a fractional revision", forge({ v: "meta.k8s.io/v1", rv: 1.5, start: `${PREFIX}a` }), /resourceVersion/],
    ["a string revision", forge({ v: "meta.k8s.io/v1", rv: "5", start: `${PREFIX}a` }), /resourceVersion/],
    ["no start", forge({ v: "meta.k8s.io/v1", rv: 5 }), /encoded start key empty/],
    ["another resource", forge({ v: "meta.k8s.io/v1", rv: 5, start: "/management.platform.sh/teams//a" }), /outside/],
    ["a traversal", forge({ v: "meta.k8s.io/v1", rv: 5, start: `${PREFIX}../../secrets/x` }), /relative path segment/],
    ["a double slash", forge({ v: "meta.k8s.io/v1", rv: 5, start: `${PREFIX}a//b` }), /empty path segment/],
    ["a dot segment", forge({ v: "meta.k8s.io/v1", rv: 5, start: `${PREFIX}./a` }), /relative path segment/],
    ["the bare prefix", forge({ v: "meta.k8s.io/v1", rv: 5, start: PREFIX }), /start key empty/],
    ["an empty token", "", /empty token/],
  ];
  for (const [what, token, message] of forged) {
    it(`decodeContinueToken() rejects ${what}`, () => {
      assert.match(rejected(token), message);
    });
  }

  it("decodeContinueToken() treats __proto__ in the token as plain data", () => {
    const token = forge('{"__proto__":{"v":"meta.k8s.io/v1","rv":5,"start":"/management.platform.sh/users//a"}}');
    assert.match(rejected(token), /does not recognize/);
    assert.equal(({} as Record<string, unknown>).rv, undefined);
  });

  it("decodeContinueToken() round-trips every position under the prefix", () => {
    const segment = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/).filter((s) => s !== "." && s !== "..");
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), segment, (revision, name) => {
        const position = { revision, startAfter: PREFIX + name };
        assert.deepEqual(decodeContinueToken(encodeContinueToken(position), PREFIX), position);
      }),
    );
  });

  it("decodeContinueToken() throws nothing but 400 StatusErrors on random strings", () => {
    const jsonish = fc
      .record({ v: fc.oneof(fc.constant("meta.k8s.io/v1"), fc.string()), rv: fc.anything(), start: fc.anything() })
      .map((body) => forge(body));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), jsonish), (token) => {
        try {
          const position = decodeContinueToken(token, PREFIX);
          assert.ok(position.revision > 0 && position.startAfter.startsWith(PREFIX));
        } catch (error) {
          assert.ok(isStatusError(error), String(error));
          assert.equal(error.code, 400);
        }
      }),
    );
  });
});
