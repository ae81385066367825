import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { publicPathMatcher } from "./public-paths.ts";

describe("publicPathMatcher()", () => {
  it("publicPathMatcher() matches exact paths, their subpaths and /* prefixes only", () => {
    const isPublic = publicPathMatcher(["/healthz", "/.well-known/*"]);
    assert.equal(isPublic("/healthz"), true);
    assert.equal(isPublic("/healthz/ping"), true);
    assert.equal(isPublic("/healthzx"), false);
    assert.equal(isPublic("/.well-known/openid-configuration"), true);
    assert.equal(isPublic("/.well-known"), false);
    assert.equal(isPublic("/apis"), false);
  });
});
