import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  auditPolicyOf,
  capCredentialRequests,
  carriesCredentials,
  compilePlatformPolicy,
  METADATA_AT_MOST,
} from "./platform-policy.ts";
import { type AuditAttributes, evaluateAuditPolicy, ruleMatches } from "./policy.ts";
import type { AuditRequestInfo } from "./types.ts";

const G = "management.platform.sh";
const info = (
  verb: string,
  resource: string,
  subresource = "",
  resourceRequest = true,
  path = "",
): AuditRequestInfo => ({
  resourceRequest,
  verb,
  path: path || `/apis/${G}/v1/${resource}`,
  group: resourceRequest ? G : "",
  version: "v1",
  namespace: "",
  resource,
  name: subresource ? "x" : "",
  subresource,
});
const attributes = (i: AuditRequestInfo): AuditAttributes => ({ user: { name: "admin", groups: [] }, info: i });
const levelFor = (config: Parameters<typeof auditPolicyOf>[0], i: AuditRequestInfo) => {
  const a = attributes(i);
  return capCredentialRequests(evaluateAuditPolicy(auditPolicyOf(config), a), a).level;
};

describe("auditPolicyOf()", () => {
  it("auditPolicyOf() maps the level shorthand 1, 2, 3 to Metadata, Request, RequestResponse", () => {
    assert.equal(levelFor({ level: 1 }, info("get", "users")), "Metadata");
    assert.equal(levelFor({ level: 2 }, info("get", "users")), "Request");
    assert.equal(levelFor({ level: 3 }, info("get", "users")), "RequestResponse");
    assert.equal(levelFor({ level: 0 }, info("get", "users")), "None");
  });

  it("auditPolicyOf() never logs selves, reviews, endpoint tokens and kubeconfigs under the shorthand", () => {
    for (const i of [
      info("create", "selves"),
      info("create", "selfsubjectaccessreviews"),
      info("create", "directclusterendpointtokens"),
      info("create", "virtualclusterinstances", "kubeconfig"),
    ]) {
      assert.equal(levelFor({ level: 3 }, i), "None", `${i.resource}/${i.subresource}`);
    }
  });

  it("compilePlatformPolicy() logs no login start under the shorthand, and the logins' outcomes as before", () => {
    const level = (config: Parameters<typeof compilePlatformPolicy>[0], verb: string, path: string) =>
      compilePlatformPolicy(config)(attributes(info(verb, "", "", false, path))).level;
    for (const path of [
      "/auth/info",
      "/auth/oidc/login",
      "/auth/corp-sso/login",
      "/oidc/auth",
      "/oidc/interaction/Ab3_x-9",
      "/oidc/.well-known/openid-configuration",
      "/oidc/jwks",
    ]) {
      assert.equal(level({ level: 1 }, "get", path), "None", path);
      assert.equal(level({ policy: { rules: [{ level: "Metadata" }] } }, "get", path), "Metadata", `${path}: explicit`);
    }
    for (const [verb, path] of [
      ["get", "/auth/oidc/callback"],
      ["post", "/auth/saml/callback"],
      ["post", "/auth/password/login"],
      ["post", "/auth/logout"],
      ["get", "/oidc/auth/Ab3_x-9"],
      ["post", "/oidc/token"],
      ["get", "/auth/a/b/login"],
      ["post", "/auth/oidc/login"],
    ]) {
      assert.equal(level({ level: 1 }, verb, path), "Metadata", `${verb} ${path}`);
    }
  });

  it("auditPolicyOf() uses explicit rules as written (they may log selves)", () => {
    assert.equal(levelFor({ policy: { rules: [{ level: "Request" }] } }, info("create", "selves")), "Request");
  });
});

describe("capCredentialRequests()", () => {
  it("capCredentialRequests() logs access key creation, password changes and login at Metadata at most", () => {
    const everything = { policy: { rules: [{ level: "RequestResponse" as const }] } };
    assert.equal(levelFor(everything, info("create", "ownedaccesskeys")), "Metadata");
    assert.equal(levelFor(everything, info("update", "ownedaccesskeys")), "RequestResponse");
    assert.equal(levelFor(everything, info("create", "users", "password")), "Metadata");
    assert.equal(levelFor(everything, info("post", "", "", false, "/auth/password/login")), "Metadata");
    assert.equal(levelFor({ policy: { rules: [{ level: "None" }] } }, info("create", "ownedaccesskeys")), "None");
  });
});

describe("carriesCredentials()", () => {
  it("carriesCredentials() answers as METADATA_AT_MOST's rules do, for any request", () => {
    const request = fc.record({
      resourceRequest: fc.boolean(),
      verb: fc.constantFrom("create", "get", "update", "post"),
      path: fc.constantFrom("/auth/password/login", "/auth", "/authx/y", "/apis/x", "/auth/"),
      group: fc.constantFrom(G, "", "other.io"),
      version: fc.constant("v1"),
      namespace: fc.constantFrom("", "p-a"),
      resource: fc.constantFrom(
        "ownedaccesskeys",
        "virtualclusterinstances",
        "users",
        "teams",
        "projects",
        "users/password",
      ),
      name: fc.constantFrom("", "x"),
      subresource: fc.constantFrom("", "kubeconfig", "password", "status"),
    });
    fc.assert(
      fc.property(request, (i) => {
        const a = attributes(i);
        assert.equal(
          carriesCredentials(a),
          METADATA_AT_MOST.some((rule) => ruleMatches(rule, a)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it("capCredentialRequests() returns one capped decision object for every request it caps", () => {
    const policy = { policy: { rules: [{ level: "RequestResponse" as const }] } };
    const decide = (i: AuditRequestInfo) => {
      const a = attributes(i);
      return capCredentialRequests(evaluateAuditPolicy(auditPolicyOf(policy), a), a);
    };
    const a = attributes(info("create", "ownedaccesskeys"));
    const decision = evaluateAuditPolicy(auditPolicyOf(policy), a);
    assert.equal(
      capCredentialRequests(decision, a),
      capCredentialRequests(decision, attributes(info("create", "users", "password"))),
    );
    assert.equal(decide(info("create", "ownedaccesskeys")).level, "Metadata");
  });
});
