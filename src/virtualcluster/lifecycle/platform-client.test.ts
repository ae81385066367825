import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { httpErrorLine, networkErrorLine, PlatformError, warningTexts } from "./platform-client.ts";

const error = (code: string, message = code) => Object.assign(new Error(message), { code });

describe("platform client messages", () => {
  it("httpErrorLine() is the Status message on one line, with the code and reason", () => {
    const status = JSON.stringify({
      kind: "Status",
      message: 'OwnedAccessKey "x" is invalid:\n  spec.ttl: Invalid value',
      reason: "Invalid",
      code: 422,
    });
    const line = httpErrorLine("https://h:1", 422, "Unprocessable Entity", status);
    assert.ok(line instanceof PlatformError);
    assert.equal(line.message, 'OwnedAccessKey "x" is invalid: spec.ttl: Invalid value');
    assert.equal(line.code, 422);
    assert.equal(line.reason, "Invalid");
  });

  it("httpErrorLine() puts a message with long runs of whitespace on one line in one pass", () => {
    const status = (message: string) => JSON.stringify({ kind: "Status", message, reason: "Invalid", code: 422 });
    const spaces = " ".repeat(1_000_000);
    assert.equal(httpErrorLine("https://h:1", 422, "", status(`a${spaces}x`)).message, `a${spaces}x`);
    assert.equal(httpErrorLine("https://h:1", 422, "", status(`a${spaces}\n${spaces}b`)).message, "a; b");
    assert.equal(httpErrorLine("https://h:1", 422, "", status("a:\n  b\n\n c")).message, "a: b; c");
  });

  it("httpErrorLine() says the URL is not the platform's API when the answer is not a Status", () => {
    for (const body of ["<html>Not Found</html>", "", '{"kind":"Other"}']) {
      assert.equal(
        httpErrorLine("https://h:1", 404, "Not Found", body).message,
        "h:1 answered 404 Not Found, which is not the platform's API (check the URL)",
      );
    }
  });

  it("networkErrorLine() names the cause and what to do", () => {
    assert.equal(
      networkErrorLine("https://h:1", error("ECONNREFUSED")),
      "cannot connect to h:1: connection refused (is the platform running?)",
    );
    assert.equal(networkErrorLine("https://h:1", error("ENOTFOUND")), "cannot resolve the host name of h:1");
    assert.equal(
      networkErrorLine(
        "https://h:1",
        error("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate; if the root CA is installed"),
      ),
      "cannot verify the certificate of h:1 (unable to verify the first certificate): log in with --ca-file <the platform's CA certificate>, or --insecure",
    );
    assert.match(networkErrorLine("https://h:1", error("EPROTO", "wrong version number")), /did not answer with TLS/);
  });

  it("warningTexts() reads every 299 warning of a header", () => {
    assert.deepEqual(warningTexts(undefined), []);
    assert.deepEqual(warningTexts('299 - "spec.ttl was reduced", 299 - "say \\"hi\\""'), [
      "spec.ttl was reduced",
      'say "hi"',
    ]);
    assert.deepEqual(warningTexts(['299 - "a"', '299 - "b"']), ["a", "b"]);
  });
});
