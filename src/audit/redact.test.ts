import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { LAST_APPLIED } from "../config/last-applied.ts";
import { REDACTED } from "../config/redaction-marker.ts";
import { auditJson, auditRequestUri, mayHoldSecrets } from "./redact.ts";

const SECRET = /hunter2|k3y-material|oidc-s3cret|tok3n|apiVersion: v1\\nclusters/;

describe("auditJson()", () => {
  it("auditJson() redacts access keys, passwords, tokens and kubeconfigs anywhere in an object", () => {
    const json = auditJson({
      kind: "List",
      items: [
        { kind: "OwnedAccessKey", spec: { key: "k3y-material", ttl: 3600, user: "alice" } },
        { kind: "DirectClusterEndpointToken", status: { token: "tok3n" } },
        { kind: "VirtualClusterInstanceKubeConfig", status: { kubeConfig: "apiVersion: v1\nclusters: []" } },
        { username: "alice", password: "hunter2", newPassword: "hunter2", currentPassword: "hunter2" },
        { oidcLogin: { idToken: "tok3n", accessToken: "tok3n", refreshToken: "tok3n" } },
      ],
    });
    assert.doesNotMatch(json, SECRET);
    const parsed = JSON.parse(json);
    assert.equal(parsed.items[0].spec.ttl, 3600);
    assert.equal(parsed.items[0].spec.user, "alice");
    assert.equal(parsed.items[0].spec.key, "<redacted>");
  });

  it("auditJson() redacts the platform config's spec.raw secrets and keeps the rest of the YAML", () => {
    const json = auditJson({ spec: { raw: "platformHost: p\nauth:\n  oidc: {clientSecret: oidc-s3cret}\n" } });
    assert.doesNotMatch(json, SECRET);
    assert.match(json, /platformHost: p/);
  });

  it("auditJson() redacts inside JSON patch operations and kubectl's last-applied annotation", () => {
    const json = auditJson([
      { op: "replace", path: "/spec/key", value: "k3y-material" },
      { op: "add", path: "/spec/raw", value: "auth:\n  idpA: {clientSecret: oidc-s3cret}\n" },
      {
        op: "add",
        path: "/metadata/annotations",
        value: { [LAST_APPLIED]: JSON.stringify({ spec: { key: "k3y-material" } }) },
      },
      { op: "replace", path: "/spec/displayName", value: "visible" },
    ]);
    assert.doesNotMatch(json, SECRET);
    assert.match(json, /visible/);
  });

  it("auditJson() keeps fields that merely resemble secret names", () => {
    const parsed = JSON.parse(
      auditJson({ spec: { tokenGeneration: 3, accessKeyType: "User", passwordRef: { key: "" } } }),
    );
    assert.equal(parsed.spec.tokenGeneration, 3);
    assert.equal(parsed.spec.accessKeyType, "User");
  });

  it("auditJson() redacts a last-applied annotation nested past the bound whole, without parsing it", () => {
    const deep = `${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`;
    const json = auditJson({ metadata: { annotations: { [LAST_APPLIED]: deep } } });
    assert.equal(JSON.parse(json).metadata.annotations[LAST_APPLIED], REDACTED);
    const fits = `${'{"a":'.repeat(100)}1${"}".repeat(100)}`;
    assert.equal(
      JSON.parse(auditJson({ metadata: { annotations: { [LAST_APPLIED]: fits } } })).metadata.annotations[LAST_APPLIED],
      JSON.stringify(JSON.parse(fits)),
    );
  });

  it("mayHoldSecrets() is true whenever auditJson() would change an object's JSON", () => {
    const keys = fc.constantFrom(
      "name",
      "spec",
      "key",
      "accessKey",
      "token",
      "userPassword",
      "raw",
      "op",
      "path",
      "value",
      "tokenTTL",
      "clientSecret",
      "KEY",
      "apiKey",
      "Op",
      LAST_APPLIED,
      'x"key',
    );
    const values = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.string(),
        fc.integer(),
        fc.dictionary(keys, tie("node")),
        fc.array(tie("node"), { maxLength: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(keys, values), (object) => {
        const json = JSON.stringify(object);
        if (!mayHoldSecrets(json)) assert.equal(auditJson(object), json);
      }),
      { numRuns: 2000 },
    );
    assert.equal(mayHoldSecrets(JSON.stringify({ spec: { accessKey: "k3y-material" } })), true);
    assert.equal(mayHoldSecrets(JSON.stringify({ kind: "User", spec: { username: "bob", email: "b@x" } })), false);
  });
});

describe("auditRequestUri()", () => {
  it("auditRequestUri() hides codes, states, tokens and assertions on the login and OpenID provider endpoints only", () => {
    assert.equal(
      auditRequestUri("/auth/oidc/callback?code=abc&state=xyz&other=1"),
      "/auth/oidc/callback?code=%3Credacted%3E&state=%3Credacted%3E&other=1",
    );
    assert.equal(
      auditRequestUri("/kubernetes/management/auth/x/login?cli_state=s&cli_redirect=http%3A%2F%2F127.0.0.1%3A1%2F"),
      "/kubernetes/management/auth/x/login?cli_state=%3Credacted%3E&cli_redirect=http%3A%2F%2F127.0.0.1%3A1%2F",
    );
    assert.equal(
      auditRequestUri("/oidc/session/end?id_token_hint=eyJ.x.y&post_logout_redirect_uri=https%3A%2F%2Fa%2F&state=s"),
      "/oidc/session/end?id_token_hint=%3Credacted%3E&post_logout_redirect_uri=https%3A%2F%2Fa%2F&state=%3Credacted%3E",
    );
    assert.equal(auditRequestUri("/auth/info"), "/auth/info");
    assert.equal(auditRequestUri("/api/v1/pods?state=x"), "/api/v1/pods?state=x");
  });
});
