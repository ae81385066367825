import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
import type { AuthorizationAttributes, Authorizer } from "../registry/types.ts";
import {
  authorizeImpersonation,
  dropImpersonationHeaders,
  impersonationAttributes,
  impersonationRequested,
  kubernetesImpersonatedUser,
} from "./impersonation.ts";

/** A request as Node parses it: header names lower case, `headers` joined, `headersDistinct` one entry per line. */
function requestWith(lines: [string, string][]): IncomingMessage {
  const distinct: Record<string, string[]> = {};
  for (const [name, value] of lines) {
    const key = name.toLowerCase();
    distinct[key] = [...(distinct[key] ?? []), value];
  }
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(distinct)) headers[name] = values.join(", ");
  return { headers, headersDistinct: distinct } as unknown as IncomingMessage;
}

const bob = { name: "bob", groups: ["system:authenticated"] };

describe("impersonationRequested()", () => {
  it("impersonationRequested() reads user, repeated groups, uid and extras with decoded lower-case keys", () => {
    const requested = impersonationRequested(
      requestWith([
        ["Impersonate-User", "dave"],
        ["Impersonate-Group", "devs"],
        ["Impersonate-Group", "a, b"],
        ["Impersonate-Uid", "u-1"],
        ["Impersonate-Extra-Scopes", "view"],
        ["Impersonate-Extra-Scopes", "edit"],
        ["Impersonate-Extra-Example.com%2fTeam", "x"],
      ]),
    );
    assert.deepEqual(requested, {
      user: "dave",
      groups: ["devs", "a, b"],
      uid: "u-1",
      extra: { scopes: ["view", "edit"], "example.com/team": ["x"] },
    });
  });

  it("impersonationRequested() is undefined without the headers and 400 for parts without a user", () => {
    assert.equal(impersonationRequested(requestWith([["Accept", "application/json"]])), undefined);
    for (const header of ["Impersonate-Group", "Impersonate-Uid", "Impersonate-Extra-Scopes"]) {
      assert.throws(
        () => impersonationRequested(requestWith([[header, "x"]])),
        (error) => isStatusError(error) && error.code === 400 && /without impersonating a user/.test(error.message),
      );
    }
    assert.throws(
      () =>
        impersonationRequested(
          requestWith([
            ["Impersonate-User", "dave"],
            ["Impersonate-Group", ""],
          ]),
        ),
      (error) => isStatusError(error) && error.code === 400,
    );
  });

  it("impersonationRequested() knows a service account by its user name, and only a well-formed one", () => {
    const account = impersonationRequested(requestWith([["Impersonate-User", "system:serviceaccount:ns:builder"]]));
    assert.deepEqual(account?.serviceAccount, { namespace: "ns", name: "builder" });
    for (const name of ["system:serviceaccount:ns", "system:serviceaccount:ns:a:b", "system:serviceaccount:NS:a"]) {
      assert.equal(impersonationRequested(requestWith([["Impersonate-User", name]]))?.serviceAccount, undefined);
    }
  });

  it("impersonationRequested() never ignores a header: any Impersonate-* header yields a request or a 400", () => {
    const header = fc.constantFrom("Impersonate-User", "Impersonate-Group", "Impersonate-Uid", "Impersonate-Extra-K");
    fc.assert(
      fc.property(fc.array(fc.tuple(header, fc.string({ minLength: 1 })), { minLength: 1 }), (lines) => {
        try {
          assert.notEqual(impersonationRequested(requestWith(lines)), undefined);
        } catch (error) {
          assert.ok(isStatusError(error) && error.code === 400, String(error));
        }
      }),
    );
  });
});

describe("impersonationAttributes()", () => {
  it("impersonationAttributes() asks for the verb impersonate on each part, as kube-apiserver does", () => {
    const checks = impersonationAttributes(bob, {
      user: "system:serviceaccount:ns:builder",
      serviceAccount: { namespace: "ns", name: "builder" },
      groups: ["devs"],
      uid: "u-1",
      extra: { scopes: ["view"] },
    });
    const summary = checks.map((c) => [c.verb, c.group, c.resource, c.subresource, c.namespace, c.name]);
    assert.deepEqual(summary, [
      ["impersonate", "", "serviceaccounts", undefined, "ns", "builder"],
      ["impersonate", "", "groups", undefined, undefined, "devs"],
      ["impersonate", "authentication.k8s.io", "userextras", "scopes", undefined, "view"],
      ["impersonate", "authentication.k8s.io", "uids", undefined, undefined, "u-1"],
    ]);
  });

  it("authorizeImpersonation() refuses with the 403 of the first part not allowed", async () => {
    const asked: AuthorizationAttributes[] = [];
    const usersOnly: Authorizer = {
      authorize: async (attributes) => {
        asked.push(attributes);
        return { allowed: attributes.resource === "users" };
      },
    };
    await assert.rejects(
      authorizeImpersonation(usersOnly, bob, { user: "dave", groups: ["admins"] }),
      (error) =>
        isStatusError(error) &&
        error.code === 403 &&
        error.message ===
          'groups "admins" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    assert.equal(asked.length, 2);
  });
});

describe("kubernetesImpersonatedUser()", () => {
  it("kubernetesImpersonatedUser() adds system:authenticated unless the groups say otherwise", () => {
    assert.deepEqual(kubernetesImpersonatedUser({ user: "dave" }).groups, ["system:authenticated"]);
    assert.deepEqual(kubernetesImpersonatedUser({ user: "dave", groups: ["devs"] }).groups, [
      "devs",
      "system:authenticated",
    ]);
    assert.deepEqual(kubernetesImpersonatedUser({ user: "dave", groups: ["system:unauthenticated"] }).groups, [
      "system:unauthenticated",
    ]);
    assert.deepEqual(kubernetesImpersonatedUser({ user: "system:anonymous" }).groups, ["system:unauthenticated"]);
  });

  it("kubernetesImpersonatedUser() gives a service account its groups when none were asked for", () => {
    const account = { user: "system:serviceaccount:ns:a", serviceAccount: { namespace: "ns", name: "a" } };
    assert.deepEqual(kubernetesImpersonatedUser(account).groups, [
      "system:serviceaccounts",
      "system:serviceaccounts:ns",
      "system:authenticated",
    ]);
    assert.deepEqual(kubernetesImpersonatedUser({ ...account, groups: ["x"] }).groups, ["x", "system:authenticated"]);
  });

  it("dropImpersonationHeaders() leaves nothing for a later hop to forward", () => {
    const request = requestWith([
      ["Impersonate-User", "dave"],
      ["Impersonate-Extra-A", "b"],
      ["Accept", "x"],
    ]);
    dropImpersonationHeaders(request);
    assert.deepEqual(Object.keys(request.headers), ["accept"]);
  });
});
