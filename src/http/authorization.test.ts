import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import type { AuthorizationAttributes, Authorizer } from "../registry/types.ts";
import { authorizationAttributes, authorizeRequest } from "./authorization.ts";
import { parseRequestInfo } from "./request-info.ts";

const bob = { name: "bob", groups: ["dev"] };
const deny = (reason?: string): Authorizer => ({ authorize: async () => ({ allowed: false, reason }) });

async function forbidden(method: string, url: string, authorizer: Authorizer, query = {}): Promise<string> {
  try {
    await authorizeRequest(authorizer, parseRequestInfo(method, url), bob, query);
  } catch (error) {
    assert.ok(isStatusError(error));
    assert.equal(error.code, 403);
    assert.equal(error.reason, "Forbidden");
    return error.message;
  }
  assert.fail("expected a 403");
}

describe("authorizeRequest()", () => {
  it("authorizeRequest() words a denied cluster-scoped request like apiserver", async () => {
    assert.equal(
      await forbidden("GET", "/apis/management.platform.sh/v1/users/alice", deny()),
      'users.management.platform.sh "alice" is forbidden: User "bob" cannot get resource "users" in API group "management.platform.sh" at the cluster scope',
    );
  });

  it("authorizeRequest() words namespaced, subresource and reasoned denials", async () => {
    assert.equal(
      await forbidden(
        "POST",
        "/apis/g.io/v1/namespaces/p1/virtualclusterinstances/vc/kubeconfig",
        deny("no access rule"),
      ),
      'virtualclusterinstances.g.io "vc" is forbidden: User "bob" cannot create resource "virtualclusterinstances/kubeconfig" in API group "g.io" in the namespace "p1": no access rule',
    );
    assert.equal(
      await forbidden("GET", "/api/v1/namespaces/p1/pods", deny()),
      'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "p1"',
    );
  });

  it("authorizeRequest() words a denied non-resource path", async () => {
    assert.equal(await forbidden("GET", "/metrics", deny()), 'forbidden: User "bob" cannot get path "/metrics"');
  });

  it("authorizeRequest() passes every attribute, including a name from metadata.name field selectors", async () => {
    let seen: AuthorizationAttributes | undefined;
    const allow: Authorizer = {
      authorize: async (attributes) => {
        seen = attributes;
        return { allowed: true };
      },
    };
    await authorizeRequest(allow, parseRequestInfo("GET", "/apis/g.io/v1/users?watch=true"), bob, {
      fieldSelector: "metadata.name=alice",
    });
    assert.deepEqual(seen, {
      user: bob,
      verb: "watch",
      group: "g.io",
      version: "v1",
      resource: "users",
      resourceRequest: true,
      name: "alice",
    });
    const attributes = authorizationAttributes(parseRequestInfo("GET", "/apis/g.io/v1/users"), bob, {
      fieldSelector: "metadata.name!=alice",
    });
    assert.equal(attributes.name, undefined);
  });

  it("authorizationAttributes() reads the selector's name with the list's own parser", () => {
    const nameOf = (fieldSelector: string) =>
      authorizationAttributes(parseRequestInfo("GET", "/apis/g.io/v1/users"), bob, { fieldSelector }).name;
    assert.equal(nameOf("metadata.name==alice,metadata.namespace=x"), "alice");
    assert.equal(nameOf("metadata.name=alice,metadata.name=alice"), "alice");
    // Two different names select nothing: no single object to name.
    assert.equal(nameOf("metadata.name=alice,metadata.name=bob"), undefined);
    // The parser keeps the spaces around a field name, so " metadata.name" is another field, as for the list.
    assert.equal(nameOf(" metadata.name=alice"), undefined);
    // A selector that does not parse names nothing (the list answers it with 400 after authorization).
    assert.equal(nameOf("metadata.name"), undefined);
    assert.equal(nameOf("metadata.name=Not_A_Name"), undefined);
  });
});
