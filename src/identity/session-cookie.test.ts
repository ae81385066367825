import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errors } from "../apimachinery/errors.ts";
import { cookieValue, SessionCookieAuthenticator, sessionCookie } from "./session-cookie.ts";

describe("SessionCookieAuthenticator", () => {
  const seen: string[] = [];
  const authenticator = new SessionCookieAuthenticator({
    async authenticateKey(key) {
      seen.push(key);
      if (key !== "good") throw errors.unauthorized("the access key has expired");
      return { name: "alice", groups: [] };
    },
  });

  it("SessionCookieAuthenticator.authenticate() takes the cookie only with the console header", async () => {
    const cookie = "theme=dark; vcp_session=good";
    assert.equal(authenticator.authenticate({ headers: { cookie } }), undefined, "no header: not ours");
    const user = await authenticator.authenticate({ headers: { cookie, "x-platform-console": "1" } });
    assert.equal(user?.name, "alice");
    assert.equal(authenticator.authenticate({ headers: { "x-platform-console": "1" } }), undefined, "no cookie");
  });

  it("SessionCookieAuthenticator.authenticate() leaves requests with a bearer token to the other authenticators", () => {
    const headers = { cookie: "vcp_session=good", "x-platform-console": "1", authorization: "Bearer other" };
    assert.equal(authenticator.authenticate({ headers, bearerToken: "other" }), undefined);
  });

  it("SessionCookieAuthenticator.authenticate() rejects an ended session with 401", async () => {
    await assert.rejects(
      async () => authenticator.authenticate({ headers: { cookie: "vcp_session=old", "x-platform-console": "1" } }),
      (error: { code?: number }) => error.code === 401,
    );
  });

  it("cookieValue() finds one cookie among several; sessionCookie() is HttpOnly, Secure and SameSite", () => {
    assert.equal(cookieValue("a=1; vcp_session=k2; b=3", "vcp_session"), "k2");
    assert.equal(cookieValue("xvcp_session=k", "vcp_session"), undefined);
    assert.equal(cookieValue(undefined, "vcp_session"), undefined);
    assert.equal(sessionCookie("k", 60), "vcp_session=k; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=60");
    assert.equal(sessionCookie("k", 0), "vcp_session=k; Path=/; HttpOnly; Secure; SameSite=Lax");
  });
});
