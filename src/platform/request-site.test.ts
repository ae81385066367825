import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ownOrigins, requestSite } from "./request-site.ts";

const OWN = ["https://platform.example.com"];

describe("requestSite()", () => {
  it("requestSite() takes the console header, Sec-Fetch-Site same-origin or an own Origin as the platform's pages", () => {
    assert.equal(requestSite({ "x-platform-console": "1" }, OWN), "same-origin");
    assert.equal(requestSite({ "sec-fetch-site": "same-origin" }, OWN), "same-origin");
    assert.equal(requestSite({ origin: "https://platform.example.com" }, OWN), "same-origin");
  });

  it("requestSite() calls any other Origin or Sec-Fetch-Site cross-site, whatever else the request says", () => {
    for (const headers of [
      { origin: "https://evil.example.com" },
      { origin: "null" },
      { origin: "http://platform.example.com" },
      { origin: "https://platform.example.com.evil.example.com" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site", "x-platform-console": "1" },
      { origin: "https://evil.example.com", "sec-fetch-site": "same-origin" },
    ]) {
      assert.equal(requestSite(headers, OWN), "cross-site", JSON.stringify(headers));
    }
  });

  it("requestSite() knows nothing of a request without any of them (no browser page sent it)", () => {
    assert.equal(requestSite({}, OWN), "unknown");
  });

  it("ownOrigins() names the host the request reached and the configured platform host", () => {
    assert.deepEqual(ownOrigins({ host: "127.0.0.1:8443" }, "https://platform.example.com"), [
      "https://127.0.0.1:8443",
      "https://platform.example.com",
    ]);
  });
});
