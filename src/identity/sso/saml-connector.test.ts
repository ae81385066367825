import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../../storage/sqlite/sqlite-store.ts";
import { nameIdFormat, SamlConnector } from "./saml-connector.ts";
import { SeenIds } from "./seen-ids.ts";

describe("nameIdFormat()", () => {
  it("nameIdFormat() expands the short forms, keeps URNs, defaults to persistent", () => {
    assert.equal(nameIdFormat(undefined), "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    assert.equal(nameIdFormat("emailAddress"), "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress");
    assert.equal(nameIdFormat("transient"), "urn:oasis:names:tc:SAML:2.0:nameid-format:transient");
    assert.equal(nameIdFormat("urn:example:custom"), "urn:example:custom");
    assert.throws(() => nameIdFormat("shoeSize"), /not a known NameID format/);
  });
});

describe("SamlConnector", () => {
  it("new SamlConnector() needs a certificate unless signature validation is skipped", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    assert.throws(
      () =>
        new SamlConnector(
          "saml",
          { ssoURL: "https://idp.example.com", caData: "bm90IGEgY2VydA==" },
          new SeenIds({ storage }),
        ),
      /at least one PEM certificate/,
    );
    assert.doesNotThrow(
      () =>
        new SamlConnector(
          "saml",
          { ssoURL: "https://idp.example.com", insecureSkipSignatureValidation: true },
          new SeenIds({ storage }),
        ),
    );
    await storage.close();
  });
});
