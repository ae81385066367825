import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../../storage/sqlite/sqlite-store.ts";
import { MAX_PENDING_REQUESTS, nameIdFormat, RequestIds, SamlConnector } from "./saml-connector.ts";
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

describe("RequestIds", () => {
  it("RequestIds keeps a started login's id for ten minutes, once", async () => {
    let now = 0;
    const ids = new RequestIds(() => now);
    assert.ok(await ids.saveAsync("a", "x"));
    assert.equal(await ids.saveAsync("a", "y"), null, "an id is kept once");
    now = 10 * 60_000;
    assert.equal(await ids.getAsync("a"), "x");
    now += 1;
    await ids.saveAsync("b", "x");
    assert.equal(await ids.getAsync("a"), null, "gone after ten minutes");
    assert.equal(await ids.removeAsync("b"), "x");
    assert.equal(ids.size, 0);
  });

  it("RequestIds holds at most MAX_PENDING_REQUESTS ids however many logins start, dropping the oldest", async () => {
    const ids = new RequestIds(() => 0);
    for (let i = 0; i < MAX_PENDING_REQUESTS + 100; i++) await ids.saveAsync(`id-${i}`, "v");
    assert.equal(ids.size, MAX_PENDING_REQUESTS);
    assert.equal(await ids.getAsync("id-99"), null);
    assert.equal(await ids.getAsync("id-100"), "v");
    assert.equal(await ids.getAsync(`id-${MAX_PENDING_REQUESTS + 99}`), "v");
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
