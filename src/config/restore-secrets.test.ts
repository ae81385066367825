import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { redactRawConfig } from "./redact.ts";
import { REDACTED } from "./redaction-marker.ts";
import { restoreSecrets } from "./restore-secrets.ts";

const STORED = `auth:
  oidc: {issuerUrl: "https://i", clientId: a, clientSecret: oidc-secret}  # clientSecret: old-secret
  connectors:
  - id: one
    idpA: {clientId: one, clientSecret: one-secret}
  - id: two
    idpA: {clientId: two, clientSecret: two-secret}
secretStore:
  auth:
    token: |
      multi
      line
`;

describe("restoreSecrets()", () => {
  it("restoreSecrets() turns a read's redacted text back into the stored text exactly", () => {
    const read = redactRawConfig(STORED);
    const restored = restoreSecrets(read, STORED);
    assert.deepEqual(restored.errors, []);
    assert.equal(restored.raw, STORED);
  });

  it("restoreSecrets() keeps each connector's secret when the list is reordered (matched by id)", () => {
    const read = parse(redactRawConfig(STORED));
    read.auth.connectors.reverse();
    const text = `auth:\n  connectors:\n${read.auth.connectors
      .map((c: { id: string }) => `  - id: ${c.id}\n    idpA: {clientId: ${c.id}, clientSecret: ${REDACTED}}\n`)
      .join("")}`;
    const restored = parse(restoreSecrets(text, STORED).raw);
    assert.equal(restored.auth.connectors[0].id, "two");
    assert.equal(restored.auth.connectors[0].idpA.clientSecret, "two-secret");
    assert.equal(restored.auth.connectors[1].idpA.clientSecret, "one-secret");
  });

  it("restoreSecrets() keeps edits next to the marker and takes new secrets as written", () => {
    const edited = redactRawConfig(STORED)
      .replace("clientId: a,", "clientId: a, getUserInfo: true,")
      .replace(`{clientId: one, clientSecret: ${REDACTED}}`, "{clientId: one, clientSecret: new-one}");
    const restored = parse(restoreSecrets(edited, STORED).raw);
    assert.equal(restored.auth.oidc.getUserInfo, true);
    assert.equal(restored.auth.oidc.clientSecret, "oidc-secret");
    assert.equal(restored.auth.connectors[0].idpA.clientSecret, "new-one");
    assert.equal(restored.secretStore.auth.token, "multi\nline\n");
  });

  it("restoreSecrets() reports a marker with nothing stored behind it at its field path", () => {
    const text = `auth:\n  connectors:\n  - id: three\n    idpA: {clientId: x, clientSecret: ${REDACTED}}\n`;
    const { errors } = restoreSecrets(text, STORED);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].field, "spec.raw.auth.connectors[0].idpA.clientSecret");
    assert.match(errors[0].detail ?? "", /none is stored here/);
    assert.equal(restoreSecrets(text, undefined).errors.length, 1);
  });

  it("restoreSecrets() leaves the marker alone at fields that are not secrets", () => {
    const text = `platformHost: ${REDACTED}\n`;
    assert.deepEqual(restoreSecrets(text, STORED), { raw: text, errors: [] });
  });

  it("restoreSecrets() refuses to keep a secret through the marker while a field that decides where it goes changes", () => {
    const stored = `auth:
  oidc: {issuerUrl: "https://idp.example.com", clientId: a, clientSecret: oidc-secret}
  connectors:
  - id: corp
    codeHostA: {clientId: c, clientSecret: corp-secret, hostName: git.example.com}
apps:
  repositories:
  - {name: charts, url: "https://charts.example.com", username: u, password: repo-secret}
secretStore: {address: "https://vault.example.com", auth: {token: vault-token}}
`;
    const read = redactRawConfig(stored);
    for (const [from, to, field] of [
      ['issuerUrl: "https://idp.example.com"', 'issuerUrl: "https://attacker.example"', "auth.oidc.issuerUrl"],
      ["clientId: a,", "clientId: other,", "auth.oidc.clientId"],
      ["clientId: a,", "clientId: a, insecureCa: true,", "auth.oidc.insecureCa"],
      ["clientId: a,", "clientId: a, caFile: /tmp/mine.pem,", "auth.oidc.caFile"],
      ["hostName: git.example.com", "hostName: attacker.example", "auth.connectors[0].codeHostA.hostName"],
      ['url: "https://charts.example.com"', 'url: "https://attacker.example"', "apps.repositories[0].url"],
      ['address: "https://vault.example.com"', 'address: "https://attacker.example"', "secretStore.address"],
    ]) {
      const { errors } = restoreSecrets(read.replace(from, to), stored);
      assert.equal(errors.length, 1, `${field}: ${JSON.stringify(errors)}`);
      assert.equal(errors[0].field, `spec.raw.${field}`);
      assert.match(errors[0].detail ?? "", /re-enter the secret/);
      assert.doesNotMatch(JSON.stringify(errors), /secret"|oidc-secret|corp-secret|repo-secret|vault-token/);
    }
    // The secret written again goes to the new issuer; false and absent are the same insecureCa.
    const rewritten = read
      .replace('issuerUrl: "https://idp.example.com"', 'issuerUrl: "https://new-idp.example.com"')
      .replace(`clientSecret: ${REDACTED}}`, "clientSecret: new-secret}");
    assert.deepEqual(restoreSecrets(rewritten, stored).errors, []);
    assert.deepEqual(
      restoreSecrets(read.replace("clientId: a,", "clientId: a, insecureCa: false,"), stored).errors,
      [],
    );
  });
});
