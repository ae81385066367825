import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../../apimachinery/errors.ts";
import type { OidcAuthenticationSettings } from "../settings/types.ts";
import { OidcAuthenticator } from "./oidc-authenticator.ts";

const ISSUER = "https://platform.example.com/oidc";

/** An unsigned JWT with these claims (the signature is the verifier's business, stubbed here). */
const jwt = (claims: Record<string, unknown>) =>
  ["{}", JSON.stringify(claims), "sig"].map((part) => Buffer.from(part).toString("base64url")).join(".");

function authenticator(settings: Partial<OidcAuthenticationSettings>, verified?: Record<string, unknown>) {
  return new OidcAuthenticator(
    { issuerURL: ISSUER, clientID: "kubernetes", usernameClaim: "sub", ...settings },
    {
      verifyJwt: async (token) => {
        if (!verified) throw new Error("signature verification failed");
        return { ...JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()), ...verified };
      },
    },
  );
}

const ask = (auth: OidcAuthenticator, token: string) =>
  auth.authenticate({ headers: { authorization: `Bearer ${token}` } });

async function refusal(answer: ReturnType<OidcAuthenticator["authenticate"]>): Promise<string> {
  try {
    await answer;
  } catch (error) {
    assert.ok(isStatusError(error) && error.code === 401);
    return error.status.message ?? "";
  }
  assert.fail("expected a 401");
}

describe("OidcAuthenticator", () => {
  it("authenticate() leaves tokens of other issuers and non-JWT credentials to the next authenticator", () => {
    const auth = authenticator({}, {});
    assert.equal(ask(auth, jwt({ iss: "https://other.example.com", sub: "x" })), undefined);
    assert.equal(ask(auth, "plain-access-key"), undefined);
    assert.equal(auth.authenticate({ headers: {} }), undefined);
  });

  it("authenticate() names the user by the claim, prefixed with the issuer unless it is email or a prefix is set", async () => {
    const token = jwt({
      iss: ISSUER,
      sub: "uid-1",
      email: "a@example.com",
      email_verified: true,
      preferred_username: "alice",
    });
    assert.equal((await ask(authenticator({}, {}), token))?.name, `${ISSUER}#uid-1`);
    assert.equal((await ask(authenticator({ usernameClaim: "email" }, {}), token))?.name, "a@example.com");
    const named = await ask(authenticator({ usernameClaim: "preferred_username", usernamePrefix: "-" }, {}), token);
    assert.equal(named?.name, "alice");
    assert.equal(named?.uid, "uid-1");
    const prefixed = await ask(
      authenticator({ usernameClaim: "preferred_username", usernamePrefix: "oidc:" }, {}),
      token,
    );
    assert.equal(prefixed?.name, "oidc:alice");
  });

  it("authenticate() takes groups from a string or a list of strings, prefixed, never a system: group", async () => {
    const settings = { usernamePrefix: "-", groupsClaim: "groups", groupsPrefix: "p:" };
    const list = await ask(authenticator(settings, {}), jwt({ iss: ISSUER, sub: "a", groups: ["dev", "ops"] }));
    assert.deepEqual(list?.groups, ["p:dev", "p:ops", "system:authenticated"]);
    const one = await ask(authenticator(settings, {}), jwt({ iss: ISSUER, sub: "a", groups: "dev" }));
    assert.deepEqual(one?.groups, ["p:dev", "system:authenticated"]);
    const system = await ask(
      authenticator({ usernamePrefix: "-", groupsClaim: "groups" }, {}),
      jwt({ iss: ISSUER, sub: "a", groups: ["system:masters", "dev"] }),
    );
    assert.deepEqual(system?.groups, ["dev", "system:authenticated"]);
    assert.match(
      await refusal(ask(authenticator(settings, {}), jwt({ iss: ISSUER, sub: "a", groups: [1] }))),
      /groups/,
    );
  });

  it("authenticate() refuses a token that does not verify, lacks the user claim, has an unverified email or a system: name", async () => {
    const token = jwt({ iss: ISSUER, sub: "a" });
    assert.match(await refusal(ask(authenticator({}), token)), /invalid OIDC token: signature verification failed/);
    assert.match(await refusal(ask(authenticator({ usernameClaim: "email" }, {}), token)), /no email claim/);
    // email_verified false, absent, or anything but a JSON true (the string "true" included) is unverified.
    for (const verified of [{ email_verified: false }, {}, { email_verified: "true" }, { email_verified: 1 }]) {
      const unverified = jwt({ iss: ISSUER, sub: "a", email: "a@example.com", ...verified });
      assert.match(
        await refusal(ask(authenticator({ usernameClaim: "email" }, {}), unverified)),
        /not verified/,
        JSON.stringify(verified),
      );
    }
    const system = jwt({ iss: ISSUER, sub: "system:admin" });
    assert.match(await refusal(ask(authenticator({ usernamePrefix: "-" }, {}), system)), /system:/);
  });
});
