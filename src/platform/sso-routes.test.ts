import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import { openRedirectPayloads } from "../utils/testing-open-redirects.ts";
import { cliRedirect, safeReturnPath } from "./sso-routes.ts";

const badRequest = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (error: unknown) => isStatusError(error) && error.code === 400 && pattern.test(error.message));

describe("safeReturnPath()", () => {
  it("safeReturnPath() keeps a path of this platform with its query and fragment", () => {
    assert.equal(safeReturnPath("/projects/a?tab=1#top"), "/projects/a?tab=1#top");
    assert.equal(safeReturnPath(undefined), undefined);
    assert.equal(safeReturnPath(""), undefined);
    assert.equal(safeReturnPath("/a%20b"), "/a%20b");
  });

  it("safeReturnPath() refuses anything that could leave the platform", () => {
    for (const target of [
      "https://evil.example.com/",
      "//evil.example.com",
      "/\\evil.example.com",
      "evil.example.com",
      "javascript:alert(1)",
      "/ok\r\nSet-Cookie: x=y",
      ...openRedirectPayloads(),
    ]) {
      // Look-alikes of "/" and "." in a path are percent-encoded into a path of the platform: kept, harmless.
      if (/^\/[\uff0f\u3002]/.test(target)) continue;
      badRequest(() => safeReturnPath(target), /path of this platform/);
    }
  });
});

describe("cliRedirect()", () => {
  const state = "s".repeat(32);

  it("cliRedirect() accepts only http on a loopback host with an explicit port", () => {
    assert.deepEqual(cliRedirect("http://127.0.0.1:4711/callback", state), {
      redirect: "http://127.0.0.1:4711/callback",
      state,
    });
    assert.equal(cliRedirect("http://[::1]:4711/cb", state).redirect, "http://[::1]:4711/cb");
    for (const target of [
      "https://127.0.0.1:4711/callback",
      "http://127.0.0.1/callback",
      "http://evil.example.com:4711/",
      "http://user:pw@127.0.0.1:4711/",
      "http://127.0.0.1.evil.example.com:4711/",
      "not a url",
    ]) {
      badRequest(() => cliRedirect(target, state), /cli_redirect/);
    }
  });

  it("cliRedirect() requires a state of 16 to 128 URL-safe characters", () => {
    badRequest(() => cliRedirect("http://127.0.0.1:4711/", undefined), /cli_state/);
    badRequest(() => cliRedirect("http://127.0.0.1:4711/", "short"), /cli_state/);
    badRequest(() => cliRedirect("http://127.0.0.1:4711/", `${"x".repeat(20)}<script>`), /cli_state/);
  });
});
