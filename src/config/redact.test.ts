import assert from "node:assert/strict";
import { describe, it, test } from "node:test";
import { parse } from "yaml";
import { redactConfigValue, redactRawConfig } from "./redact.ts";
import { REDACTED } from "./redaction-marker.ts";

const RAW = `# platform config
auth:
  oidc:
    issuerUrl: https://idp.example.com
    clientId: platform
    clientSecret: "oidc-secret"   # rotated; old clientSecret: previous-secret
  connectors:
  - id: corp
    idpB: {clientId: corp, clientSecret: 'corp-secret'}
  - id: saml
    saml: {ssoURL: "https://sso", ca: /ca.pem}
oidc:
  clients:
  - {clientId: ui, clientSecret: ui-secret}
apps:
  repositories:
  - name: charts
    url: https://charts.example.com
    password: repo-password
secretStore:
  auth:
    token: |
      vault-token
  syncInterval: 1m
mystery:
  client_secret: misspelt-secret
`;

const SECRETS = [
  "oidc-secret",
  "previous-secret",
  "corp-secret",
  "ui-secret",
  "repo-password",
  "vault-token",
  "misspelt-secret",
];

describe("redactRawConfig()", () => {
  it("redactRawConfig() replaces every secret, including comments and unknown secret-like fields", () => {
    const redacted = redactRawConfig(RAW);
    for (const secret of SECRETS) assert.doesNotMatch(redacted, new RegExp(secret));
    const value = parse(redacted);
    assert.equal(value.auth.oidc.clientSecret, REDACTED);
    assert.equal(value.auth.connectors[0].idpB.clientSecret, REDACTED);
    assert.equal(value.oidc.clients[0].clientSecret, REDACTED);
    assert.equal(value.apps.repositories[0].password, REDACTED);
    assert.equal(value.secretStore.auth.token, REDACTED);
    assert.equal(value.mystery.client_secret, REDACTED);
  });

  it("redactRawConfig() keeps everything else exactly as written", () => {
    const redacted = redactRawConfig(RAW);
    const keep = (text: string) => text.split("\n").filter((line) => !/secret|password|token|vault-token/i.test(line));
    assert.deepEqual(keep(redacted), keep(RAW));
    assert.match(redacted, /^# platform config\n/);
    assert.match(redacted, /clientSecret: <redacted> {3}# rotated; old clientSecret: <redacted>\n/);
  });

  it("redactRawConfig() redacts the anchor behind an alias used at a secret field", () => {
    const redacted = redactRawConfig("shared: &s top-secret\nauth:\n  idpA: {clientId: a, clientSecret: *s}\n");
    assert.doesNotMatch(redacted, /top-secret/);
  });

  it("redactRawConfig() redacts a secret field written with the wrong type, every value inside it", () => {
    const redacted = redactRawConfig(
      "auth:\n  oidc:\n    clientId: a\n    clientSecret: {nested: Wr0ngType, list: [L1st]}\n",
    );
    assert.doesNotMatch(redacted, /Wr0ngType|L1st/);
    assert.match(redacted, /clientId: a/);
  });

  it("redactRawConfig() leaves empty secrets and configs without secrets unchanged", () => {
    const plain = "platformHost: p.example.com\nauth:\n  oidc: {clientSecret: ''}\n";
    assert.equal(redactRawConfig(plain), plain);
    assert.equal(redactRawConfig(""), "");
  });

  it("redactRawConfig() replaces text that does not parse as a whole", () => {
    assert.equal(redactRawConfig("auth: [clientSecret: x"), REDACTED);
  });
});

describe("redactConfigValue()", () => {
  it("redactConfigValue() replaces a secret field of the wrong type whole", () => {
    const redacted = redactConfigValue({ auth: { oidc: { clientId: "a", clientSecret: { nested: "Wr0ngType" } } } });
    assert.equal(redacted.auth.oidc.clientSecret, REDACTED);
    assert.equal(redacted.auth.oidc.clientId, "a");
  });

  it("redactConfigValue() replaces the schema's secret fields in a parsed config and copies the rest", () => {
    const config = parse(RAW);
    const redacted = redactConfigValue(config);
    assert.equal(redacted.auth.oidc.clientSecret, REDACTED);
    assert.equal(redacted.auth.oidc.clientId, "platform");
    assert.equal(redacted.secretStore.syncInterval, "1m");
    assert.equal(config.auth.oidc.clientSecret, "oidc-secret", "the input is not changed");
    for (const secret of SECRETS) assert.doesNotMatch(JSON.stringify(redacted), new RegExp(secret));
  });
});

test("redactRawConfig() replaces text nested past the bound as a whole, without walking it", () => {
  assert.equal(redactRawConfig(`a: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`), REDACTED);
  assert.equal(redactRawConfig(`a: ${"[".repeat(98)}1${"]".repeat(98)}\n`), `a: ${"[".repeat(98)}1${"]".repeat(98)}\n`);
});
