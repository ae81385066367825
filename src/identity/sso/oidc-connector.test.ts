import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mapOidcClaims, oidcScopes } from "./oidc-connector.ts";
import { SsoRefusal } from "./types.ts";

describe("mapOidcClaims()", () => {
  it("mapOidcClaims() reads the configured claims; the prefix goes on the suggested username, never the user id", () => {
    const identity = mapOidcClaims(
      {
        usernameClaim: "oid",
        usernamePrefix: "corp:",
        platformUsernameClaim: "upn",
        emailClaim: "mail",
        groupsClaim: "roles",
        groupsPrefix: "oidc:",
        allowedExtraClaims: ["department", "missing"],
      },
      {
        sub: "s",
        oid: "o-1",
        upn: "alice",
        mail: "a@example.com",
        email_verified: false,
        roles: "admins",
        department: "eng",
        secret: "x",
      },
    );
    assert.deepEqual(identity, {
      userId: "o-1",
      username: "corp:alice",
      preferredUsername: "alice",
      email: "a@example.com",
      emailVerified: false,
      displayName: undefined,
      groups: ["oidc:admins"],
      extraClaims: { department: ["eng"] },
    });
  });

  it("mapOidcClaims() defaults to sub, preferred_username, email and groups", () => {
    const identity = mapOidcClaims(
      {},
      { sub: "u1", preferred_username: "bob", email: "b@example.com", groups: ["x", "y"] },
    );
    assert.equal(identity.userId, "u1");
    assert.equal(identity.username, "bob");
    assert.deepEqual(identity.groups, ["x", "y"]);
    assert.equal(mapOidcClaims({}, { sub: "u2" }).username, "u2");
  });

  it("mapOidcClaims() refuses a user outside the required groups and a groups claim of the wrong type", () => {
    assert.throws(
      () => mapOidcClaims({ groups: ["admins"] }, { sub: "u", groups: ["dev"] }),
      (error: unknown) =>
        error instanceof SsoRefusal && error.rule === "groups" && /oidc groups: admins/.test(error.message),
    );
    assert.throws(
      () => mapOidcClaims({}, { sub: "u", groups: [1, 2] }),
      (error: unknown) => error instanceof SsoRefusal && error.rule === "groupsClaim",
    );
    assert.throws(() => mapOidcClaims({ usernameClaim: "oid" }, { sub: "u" }), /no "oid" claim/);
  });
});

describe("mapOidcClaims() and email_verified", () => {
  it('mapOidcClaims() counts an e-mail verified only for a JSON true (absent, false, "true", 1 are not)', () => {
    const verified = (value: unknown) =>
      mapOidcClaims({}, { sub: "u", email: "u@example.com", ...(value === undefined ? {} : { email_verified: value }) })
        .emailVerified;
    assert.equal(verified(true), true);
    for (const value of [undefined, false, "true", "TRUE", 1, [true], { value: true }]) {
      assert.equal(verified(value), false, JSON.stringify(value));
    }
  });

  it("mapOidcClaims() does not apply email_verified to another emailClaim, nor to no e-mail at all", () => {
    const claims = { sub: "u", mail: "m@example.com", email: "e@example.com", email_verified: true };
    assert.equal(mapOidcClaims({ emailClaim: "mail" }, claims).emailVerified, false);
    assert.equal(mapOidcClaims({}, { sub: "u", email_verified: true }).emailVerified, false);
  });

  it("mapOidcClaims() refuses usernameClaim email unless the provider states it verified (kube-apiserver's rule)", () => {
    const config = { usernameClaim: "email" };
    assert.equal(
      mapOidcClaims(config, { sub: "u", email: "a@example.com", email_verified: true }).userId,
      "a@example.com",
    );
    for (const claims of [
      { sub: "u", email: "a@example.com" },
      { sub: "u", email: "a@example.com", email_verified: "true" },
      { sub: "u", email: "a@example.com", email_verified: false },
    ]) {
      assert.throws(
        () => mapOidcClaims(config, claims),
        (error: unknown) => error instanceof SsoRefusal && error.rule === "usernameClaim",
      );
    }
  });
});

describe("oidcScopes()", () => {
  it("oidcScopes() uses the defaults when none are configured and always asks for openid", () => {
    assert.deepEqual(oidcScopes([], ["email", "profile"]), ["openid", "email", "profile"]);
    assert.deepEqual(oidcScopes(["groups"], ["email"]), ["openid", "groups"]);
    assert.deepEqual(oidcScopes(["email", "openid"], []), ["email", "openid"]);
  });
});
