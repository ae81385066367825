import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../../storage/sqlite/sqlite-store.ts";
import { LOGIN_STATE_TTL_MS, LoginStates, LoginStateTooLarge } from "./login-state.ts";
import { SEEN_IDS_PREFIX, SeenIds } from "./seen-ids.ts";

const SECRETS = ["cookie-secret-0123456789-0123456789-abcdef"];
const login = { connectorId: "oidc", connector: { verifier: "pkce-verifier-0123456789" }, returnPath: "/projects" };

describe("LoginStates", () => {
  it("LoginStates.open() answers the login sealed for its state, on any process with the secrets, for ten minutes", () => {
    let now = 1_000_000;
    const states = new LoginStates({ secrets: SECRETS, now: () => now });
    const sealed = states.seal("state-a", login);
    assert.equal(sealed.includes("pkce-verifier"), false, "the browser cannot read what the login keeps");
    assert.deepEqual(new LoginStates({ secrets: SECRETS, now: () => now }).open("state-a", sealed), login);
    assert.equal(states.open("state-b", sealed), undefined, "bound to its state");
    assert.equal(states.open("", sealed), undefined);
    assert.equal(
      new LoginStates({ secrets: ["another-secret-0123456789-0123456789"] }).open("state-a", sealed),
      undefined,
    );
    now += LOGIN_STATE_TTL_MS;
    assert.equal(states.open("state-a", sealed), undefined, "expired");
  });

  it("LoginStates.cookieName() names the cookie after the state, without all of it", () => {
    const states = new LoginStates({ secrets: SECRETS });
    const state = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcd";
    assert.equal(states.cookieName(state), "vcp_sso_AbCdEfGhIjKlMnOp");
  });

  it("LoginStates.stale() keeps a browser's newest logins in progress and names the rest to clear", () => {
    let now = 1_000_000;
    const states = new LoginStates({ secrets: SECRETS, now: () => now });
    const cookies = new Map<string, string>([["vcp_session", "x"]]);
    for (const state of ["first-state-0000000", "second-state-000000", "third-state-0000000"]) {
      cookies.set(states.cookieName(state), states.seal(state, login));
      now += 1000;
    }
    cookies.set("vcp_sso_tampered_cookie", "v1.AAAA");
    assert.deepEqual(states.stale(cookies).sort(), [
      states.cookieName("first-state-0000000"),
      "vcp_sso_tampered_cookie",
    ]);
    now += LOGIN_STATE_TTL_MS;
    assert.equal(states.stale(cookies).length, 4, "expired ones go too");
  });

  it("LoginStates.seal() refuses a login too large for a cookie", () => {
    const states = new LoginStates({ secrets: SECRETS });
    assert.throws(() => states.seal("s", { ...login, returnPath: `/${"a".repeat(4000)}` }), LoginStateTooLarge);
  });
});

describe("SeenIds", () => {
  it("add() refuses an id already seen until it expires, on any SeenIds of the store", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 0;
    const seen = new SeenIds({ storage, now: () => now });
    const other = new SeenIds({ storage, now: () => now });
    assert.equal(await seen.add("saml/_assertion-1", 100), true);
    assert.equal(await seen.add("saml/_assertion-1", 100), false);
    assert.equal(await other.add("saml/_assertion-1", 100), false);
    assert.equal(await other.add("saml/_assertion-2", 100), true);
    now = 100;
    assert.equal(await other.add("saml/_assertion-1", 200), true);
    const { records } = await storage.list({ prefix: SEEN_IDS_PREFIX });
    assert.equal(
      records.some((record) => record.key.includes("assertion")),
      false,
    );
    await storage.close();
  });
});
