import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chooseConnector } from "./browser-login.ts";

const methods = (ids: string[], password = true) => ({
  password: { enabled: password },
  connectors: ids.map((id) => ({ id, displayName: id, type: "oidc" })),
});

describe("chooseConnector()", () => {
  it("chooseConnector() takes --connector, or the only connector there is", () => {
    assert.equal(chooseConnector(methods(["oidc"]), undefined), "oidc");
    assert.equal(chooseConnector(methods(["oidc", "saml"]), "saml"), "saml");
  });

  it("chooseConnector() says what to do when it cannot choose", () => {
    assert.throws(
      () => chooseConnector(methods(["oidc", "saml"]), undefined),
      /choose one with --connector \(oidc, saml\)/,
    );
    assert.throws(() => chooseConnector(methods(["oidc"]), "gh"), /no login connector "gh" \(it has: oidc\)/);
    assert.throws(() => chooseConnector(methods([]), undefined), /log in with --username or --access-key/);
    assert.throws(
      () => chooseConnector(methods([], false), undefined),
      /password login is off: log in with --access-key/,
    );
  });
});
