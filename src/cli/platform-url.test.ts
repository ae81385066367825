import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { CommandError } from "./command-error.ts";
import { normalizePlatformUrl } from "./platform-url.ts";

const hostArb = fc.oneof(fc.domain(), fc.ipV4(), fc.constant("localhost"));
const portArb = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });
const pathArb = fc.array(fc.stringMatching(/^[a-z0-9_-]{1,8}$/), { maxLength: 3 }).map((parts) => parts.join("/"));
const slashesArb = fc.stringMatching(/^\/{0,3}$/);
/** URLs as people type them: with or without a scheme, port, path, prefix and trailing slashes. */
const typedUrl = fc
  .record({
    scheme: fc.constantFrom("", "https://", "HTTPS://"),
    host: hostArb,
    port: portArb,
    path: pathArb,
    prefix: fc.boolean(),
    slashes: slashesArb,
  })
  .map(
    ({ scheme, host, port, path, prefix, slashes }) =>
      `${scheme}${host}${port ? `:${port}` : ""}${path ? `/${path}` : ""}${prefix ? "/kubernetes/management" : ""}${slashes}`,
  );

describe("normalizePlatformUrl()", () => {
  it("normalizePlatformUrl() prepends https://, drops trailing slashes and the API prefix", () => {
    assert.equal(normalizePlatformUrl("platform.example.com"), "https://platform.example.com");
    assert.equal(normalizePlatformUrl("127.0.0.1:8443/"), "https://127.0.0.1:8443");
    assert.equal(normalizePlatformUrl(" https://Platform.Example.com:443// "), "https://platform.example.com");
    assert.equal(normalizePlatformUrl("https://h:8443/kubernetes/management/"), "https://h:8443");
    assert.equal(normalizePlatformUrl("https://h/vcp/kubernetes/management"), "https://h/vcp");
    assert.equal(normalizePlatformUrl("[::1]:8443"), "https://[::1]:8443");
  });

  it("normalizePlatformUrl() refuses plain http unless allowed", () => {
    assert.throws(
      () => normalizePlatformUrl("http://h:8080"),
      (error: Error) => {
        assert.ok(error instanceof CommandError);
        assert.match(error.message, /refusing plain http for h:8080.*--allow-http/);
        return true;
      },
    );
    assert.equal(normalizePlatformUrl("http://h:8080/", { allowHttp: true }), "http://h:8080");
  });

  it("normalizePlatformUrl() refuses what is not a platform address, with one line saying why", () => {
    for (const [input, pattern] of [
      ["", /empty/],
      ["   ", /empty/],
      ["https://a b", /not a valid URL/],
      ["ftp://h", /only https/],
      ["https://user:pw@h", /credentials/],
      ["https://h/?x=1", /no query or fragment/],
      ["https://h/#top", /no query or fragment/],
    ] as const) {
      assert.throws(
        () => normalizePlatformUrl(input),
        (error: Error) => error instanceof CommandError && pattern.test(error.message) && !error.message.includes("\n"),
        input,
      );
    }
  });

  it("normalizePlatformUrl() never leaves a trailing slash, a prefix or a non-https scheme, and is idempotent", () => {
    fc.assert(
      fc.property(typedUrl, (input) => {
        const once = normalizePlatformUrl(input);
        assert.ok(once.startsWith("https://"), once);
        assert.ok(!once.endsWith("/"), once);
        assert.ok(!once.endsWith("/kubernetes/management"), once);
        assert.equal(normalizePlatformUrl(once), once);
        assert.equal(new URL(once).hostname, new URL(/^https:\/\//i.test(input) ? input : `https://${input}`).hostname);
      }),
    );
  });

  it("normalizePlatformUrl() accepts any http:// input only with allowHttp", () => {
    fc.assert(
      fc.property(typedUrl, (typed) => {
        const input = `http://${typed.replace(/^https:\/\//i, "")}`;
        assert.throws(() => normalizePlatformUrl(input), CommandError);
        assert.ok(normalizePlatformUrl(input, { allowHttp: true }).startsWith("http://"));
      }),
    );
  });

  it("normalizePlatformUrl() answers any text with an https URL or a one-line CommandError, nothing else", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), typedUrl), (input) => {
        try {
          const url = normalizePlatformUrl(input);
          assert.ok(url.startsWith("https://") && !url.endsWith("/"));
        } catch (error) {
          assert.ok(error instanceof CommandError, String(error));
          assert.equal(error.lines.length, 1);
        }
      }),
    );
  });
});
