// Issue 29 item 5 over HTTPS against the real platform: another site cannot log a person out (a cross-site POST or
// a GET changes nothing, whatever cookie it carries), while the console's logout, the logout page's button and the
// CLI's bearer logout work; and a flood of wrong passwords from one client address throttles that address, never
// the real user logging in from another.

import assert from "node:assert/strict";
import { request } from "node:https";
import { after, before, describe, it } from "node:test";
import { AuthClient, type Reply } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { MGMT } from "./support/sso-platform.ts";

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** The client's own address (any of 127.0.0.0/8 reaches the platform on 127.0.0.1). */
  from?: string;
}

describe("logout from another site, and password guesses from one address", () => {
  let platform: PlatformProcess;
  let client: AuthClient;

  const call = ({ method, path, headers = {}, body, from }: Call): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${platform.url}${path}`,
        {
          method,
          ca: platform.caPem,
          agent: false,
          ...(from ? { localAddress: from } : {}),
          headers: {
            accept: "application/json",
            ...(payload ? { "content-type": "application/json" } : {}),
            ...headers,
          },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: () => JSON.parse(text) }),
          );
        },
      );
      req.on("error", reject);
      req.end(payload);
    });

  /** A console session: the password login of the console, whose key comes back as the session cookie. */
  const consoleSession = async (username: string, password: string, from?: string) => {
    const reply = await call({
      method: "POST",
      path: "/auth/password/login",
      headers: { "x-platform-console": "1" },
      body: { username, password },
      from,
    });
    assert.equal(reply.status, 200, reply.body);
    const cookie = String(reply.headers["set-cookie"]).match(/vcp_session=([^;]+)/)?.[1];
    assert.ok(cookie);
    return cookie;
  };
  const works = async (key: string) =>
    (await call({ method: "GET", path: `${MGMT}/users/carol`, headers: { authorization: `Bearer ${key}` } })).status;
  const clearsCookie = (reply: Reply) => String(reply.headers["set-cookie"] ?? "").includes("vcp_session=;");

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    await client.createUser(platform.adminKey, "carol");
    assert.equal((await client.setPassword(platform.adminKey, "carol", "carol-password-1")).status, 201);
  });
  after(async () => {
    client?.close();
    await platform?.stop();
  });

  it("another site cannot log a person out; the console, the logout page and the CLI can", async () => {
    const key = await consoleSession("carol", "carol-password-1");
    const cookie = `vcp_session=${key}`;
    for (const [what, attempt] of [
      ["a form on another site (Origin)", { origin: "https://evil.example.com", cookie }],
      ["another origin of the same site", { origin: "https://127.0.0.1:1", cookie }],
      ["an opaque origin", { origin: "null", cookie }],
      ["a fetch marked cross-site", { "sec-fetch-site": "cross-site", cookie }],
      ["a same-site page", { "sec-fetch-site": "same-site", cookie }],
      ["a request from no page at all with the cookie", { cookie }],
      ["a cross-site form the cookie did not go with", { origin: "https://evil.example.com", accept: "text/html" }],
    ] as const) {
      const reply = await call({ method: "POST", path: "/auth/logout", headers: attempt });
      assert.equal(reply.status, 403, `${what}: ${reply.body}`);
      assert.equal(clearsCookie(reply), false, `${what}: the answer must not end the session cookie`);
      assert.equal(await works(key), 200, `${what}: the session still works`);
    }
    // A link or an image (GET) only shows the page with the button.
    const page = await call({ method: "GET", path: "/auth/logout", headers: { cookie, accept: "text/html" } });
    assert.equal(page.status, 200);
    assert.match(page.body, /<form method="post" action="\/auth\/logout">/);
    assert.equal(clearsCookie(page), false);
    assert.equal(await works(key), 200);
    const api = await call({ method: "GET", path: "/auth/logout", headers: { cookie } });
    assert.equal(api.status, 405);
    assert.equal(api.headers.allow, "POST");

    // The console's logout (its header), the page's button (the platform's Origin), the CLI (bearer).
    const viaConsole = await call({
      method: "POST",
      path: "/auth/logout",
      headers: { cookie, "x-platform-console": "1" },
    });
    assert.equal(viaConsole.status, 200, viaConsole.body);
    assert.ok(clearsCookie(viaConsole));
    assert.equal(await works(key), 401);
    const second = await consoleSession("carol", "carol-password-1");
    const viaButton = await call({
      method: "POST",
      path: "/auth/logout",
      headers: { cookie: `vcp_session=${second}`, origin: platform.url, accept: "text/html" },
    });
    assert.equal(viaButton.status, 200, viaButton.body);
    assert.equal(await works(second), 401);
    const cli = (await client.login("carol", "carol-password-1")).json().accessKey;
    const viaCli = await call({ method: "POST", path: "/auth/logout", headers: { authorization: `Bearer ${cli}` } });
    assert.equal(viaCli.status, 200, viaCli.body);
    assert.equal(await works(cli), 401);
  });

  it("wrong passwords from one address throttle that address, not the real user at another", async () => {
    const attacker = "127.0.0.2";
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const reply = await call({
        method: "POST",
        path: "/auth/password/login",
        body: { username: "carol", password: `guess-${i}` },
        from: attacker,
      });
      statuses.push(reply.status);
    }
    assert.ok(statuses.includes(429), `the guessing address is throttled: ${statuses}`);
    const atAttacker = await call({
      method: "POST",
      path: "/auth/password/login",
      body: { username: "carol", password: "carol-password-1" },
      from: attacker,
    });
    assert.equal(atAttacker.status, 429, "even the right password waits at the guessing address");
    assert.ok(Number(atAttacker.headers["retry-after"]) >= 1);
    // Carol, elsewhere, logs in; with the console too.
    const elsewhere = await call({
      method: "POST",
      path: "/auth/password/login",
      body: { username: "carol", password: "carol-password-1" },
      from: "127.0.0.3",
    });
    assert.equal(elsewhere.status, 200, elsewhere.body);
    assert.ok(await consoleSession("carol", "carol-password-1", "127.0.0.4"));
  });
});
