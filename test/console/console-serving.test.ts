// How the platform serves the console over HTTPS, without a browser: the page and its headers, the bundle (gzip,
// long caching, 404 for a missing file), the public branding endpoint, and password login from the console setting
// the session cookie instead of answering the key.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { httpsCall } from "../support/https-call.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";

const call = (
  platform: PlatformProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) => httpsCall(platform, method, path, headers, body);

describe("console serving", () => {
  let platform: PlatformProcess;
  let password: string;

  before(async () => {
    platform = await startPlatformProcess();
    password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
  });
  after(() => platform?.stop());

  it("serves every console page to browsers with security headers, and its bundle gzipped and cached", async () => {
    for (const path of ["/", "/login", "/users", "/users/alice/access-keys", "/projects/default", "/config"]) {
      const page = await call(platform, "GET", path, { accept: "text/html" });
      assert.equal(page.status, 200, path);
      assert.equal(page.headers["cache-control"], "no-store");
      assert.equal(page.headers["x-frame-options"], "DENY");
      assert.match(String(page.headers["content-security-policy"]), /frame-ancestors 'none'/);
    }
    const page = (await call(platform, "GET", "/", { accept: "text/html" })).body.toString();
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(page)?.[1];
    assert.ok(script, "the page loads its bundle");
    const gzipped = await call(platform, "GET", script, { "accept-encoding": "gzip, br" });
    assert.equal(gzipped.status, 200);
    assert.equal(gzipped.headers["content-encoding"], "gzip");
    assert.match(String(gzipped.headers["cache-control"]), /immutable/);
    const plain = await call(platform, "GET", script, {});
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.deepEqual(gunzipSync(gzipped.body), plain.body);
    const missing = await call(platform, "GET", "/assets/none.js", { accept: "application/json" });
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString()).kind, "Status");
  });

  it("serves the branding without credentials", async () => {
    const settings = await call(platform, "GET", "/console/settings", { accept: "application/json" });
    assert.equal(settings.status, 200);
    const body = JSON.parse(settings.body.toString());
    assert.deepEqual(body.navBarButtons, []);
    assert.match(body.platformVersion, /^v/);
  });

  it("answers password login from the console with the session cookie, and other clients with the key", async () => {
    const credentials = JSON.stringify({ username: "admin", password });
    const json = { "content-type": "application/json", accept: "application/json" };
    const fromConsole = await call(
      platform,
      "POST",
      "/auth/password/login",
      { ...json, "x-platform-console": "1" },
      credentials,
    );
    assert.equal(fromConsole.status, 200);
    const cookie = String(fromConsole.headers["set-cookie"]);
    assert.match(cookie, /^vcp_session=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=\d+/);
    const answer = JSON.parse(fromConsole.body.toString());
    assert.deepEqual(Object.keys(answer).sort(), ["user", "username"], "the key stays in the HttpOnly cookie");

    const fromCli = await call(platform, "POST", "/auth/password/login", json, credentials);
    assert.equal(fromCli.headers["set-cookie"], undefined);
    assert.ok(JSON.parse(fromCli.body.toString()).accessKey);
  });
});
