import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MAX_RETURN_PATH_LENGTH, safeReturnPath } from "./safe-return-path.ts";
import { openRedirectPayloads } from "./testing-open-redirects.ts";

const ORIGINS = ["https://platform.example.com", "https://127.0.0.1:8443", "http://localhost"];

/** What every accepted value must satisfy, wherever the platform is served. */
function staysOnPlatform(result: string): void {
  assert.ok(result.startsWith("/") && !result.startsWith("//") && !result.startsWith("/\\"), result);
  for (const origin of ORIGINS) {
    assert.equal(new URL(result, origin).origin, origin, `${result} leaves ${origin}`);
    // A proxy or router that decodes once more still sees a path of the platform.
    let form = result;
    for (let round = 0; round < 3; round++) {
      form = decodeURIComponent(form);
      assert.ok(!form.startsWith("//") && !form.includes("\\"), `${result} decodes to ${form}`);
      assert.equal(new URL(form, origin).origin, origin, `${result} decodes to ${form}, which leaves ${origin}`);
    }
  }
}

/** Characters open redirects are made of, so generated strings hit the interesting cases often. */
const TRICKY = fc.constantFrom(
  "/",
  "\\",
  ".",
  "%",
  "2e",
  "2f",
  "2F",
  "5c",
  "25",
  "@",
  ":",
  "?",
  "#",
  "\t",
  "\n",
  "\r",
  " ",
  "https",
  "javascript",
  "evil.example.com",
  "a",
  "c0",
  "af",
  "\uff0f",
);

describe("safeReturnPath()", () => {
  it("safeReturnPath() keeps a path of the platform with its query and fragment", () => {
    assert.equal(safeReturnPath("/projects/a?tab=1#top"), "/projects/a?tab=1#top");
    assert.equal(safeReturnPath("/oidc/interaction/Ab_c-1"), "/oidc/interaction/Ab_c-1");
    assert.equal(
      safeReturnPath("/oidc/auth?client_id=x&redirect_uri=https%3A%2F%2Fapp"),
      "/oidc/auth?client_id=x&redirect_uri=https%3A%2F%2Fapp",
    );
    assert.equal(safeReturnPath("/"), "/");
    assert.equal(safeReturnPath("/a b"), "/a%20b");
  });

  it("safeReturnPath() says nothing for an absent, empty or too long value", () => {
    assert.equal(safeReturnPath(undefined), undefined);
    assert.equal(safeReturnPath(null), undefined);
    assert.equal(safeReturnPath(""), undefined);
    assert.equal(safeReturnPath(`/${"a".repeat(MAX_RETURN_PATH_LENGTH)}`), undefined);
  });

  it("safeReturnPath() refuses every known open-redirect payload or keeps it on the platform", () => {
    for (const payload of openRedirectPayloads()) {
      const result = safeReturnPath(payload);
      if (result !== undefined) staysOnPlatform(result);
      for (const origin of ORIGINS) {
        if (result !== undefined) assert.notEqual(new URL(result, origin).hostname, "evil.example.com", payload);
      }
    }
  });

  it("safeReturnPath() refuses the forms that collapse to another host (the reported /.//host among them)", () => {
    for (const payload of [
      "/.//evil.example.com",
      "/a/..//evil.example.com",
      "/%2e//evil.example.com",
      "/%2f%2fevil.example.com",
      "/%5cevil.example.com",
      "/\t/evil.example.com",
      "https:evil.example.com",
      "/@evil.example.com",
      "/%c0%afevil.example.com",
      "/.%2e/",
      "/a/../b",
    ]) {
      assert.equal(safeReturnPath(payload), undefined, payload);
    }
  });

  it("safeReturnPath() accepts only values that stay on the platform in every decoding (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "grapheme", maxLength: 40 }),
          fc.array(TRICKY, { maxLength: 12 }).map((parts) => parts.join("")),
        ),
        (value) => {
          const result = safeReturnPath(value);
          if (result === undefined) return;
          staysOnPlatform(result);
          assert.equal(safeReturnPath(result), result, "the normal form is its own normal form");
        },
      ),
      { numRuns: 5000 },
    );
  });

  it("safeReturnPath() keeps every plain path of segments, query and fragment unchanged (property)", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,11}$/).filter((s) => s !== "." && s !== "..");
    const query = fc.stringMatching(/^[A-Za-z0-9=&_-]{0,20}$/);
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), query, (segments, search) => {
        const path = `/${segments.join("/")}${search ? `?${search}` : ""}`;
        assert.equal(safeReturnPath(path), path);
      }),
      { numRuns: 2000 },
    );
  });
});
