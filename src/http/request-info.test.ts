import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
import { stripPathPrefix } from "./path-prefix.ts";
import { parseRequestInfo } from "./request-info.ts";

describe("parseRequestInfo()", () => {
  it("parseRequestInfo() reads a cluster-scoped get", () => {
    const info = parseRequestInfo("GET", "/apis/management.platform.sh/v1/users/alice");
    assert.deepEqual(info, {
      resourceRequest: true,
      verb: "get",
      path: "/apis/management.platform.sh/v1/users/alice",
      apiPrefix: "apis",
      group: "management.platform.sh",
      version: "v1",
      namespace: "",
      namespacedPath: false,
      resource: "users",
      name: "alice",
      subresource: "",
    });
  });

  it("parseRequestInfo() reads a namespaced subresource", () => {
    const info = parseRequestInfo("POST", "/apis/g.io/v1/namespaces/ns1/virtualclusterinstances/vc/kubeconfig");
    assert.equal(info.verb, "create");
    assert.equal(info.group, "g.io");
    assert.equal(info.namespace, "ns1");
    assert.equal(info.namespacedPath, true);
    assert.equal(info.resource, "virtualclusterinstances");
    assert.equal(info.name, "vc");
    assert.equal(info.subresource, "kubeconfig");
  });

  it("parseRequestInfo() reads the namespace object itself and its status", () => {
    const ns = parseRequestInfo("GET", "/api/v1/namespaces/team-a");
    assert.equal(ns.apiPrefix, "api");
    assert.equal(ns.group, "");
    assert.equal(ns.resource, "namespaces");
    assert.equal(ns.name, "team-a");
    assert.equal(ns.namespace, "team-a");
    assert.equal(ns.namespacedPath, false);
    const status = parseRequestInfo("PUT", "/api/v1/namespaces/team-a/status");
    assert.equal(status.verb, "update");
    assert.equal(status.subresource, "status");
    assert.equal(status.namespacedPath, false);
    const list = parseRequestInfo("GET", "/api/v1/namespaces");
    assert.equal(list.verb, "list");
    assert.equal(list.namespace, "");
  });

  it("parseRequestInfo() derives list, watch and deletecollection from a missing name", () => {
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods").verb, "list");
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods?watch=true&x=1").verb, "watch");
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods?watch=1").verb, "watch");
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods?watch=false").verb, "list");
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods?allowWatchBookmarks=true").verb, "list");
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods/p?watch=true").verb, "get");
    assert.equal(parseRequestInfo("DELETE", "/api/v1/namespaces/a/pods").verb, "deletecollection");
    assert.equal(parseRequestInfo("DELETE", "/api/v1/namespaces/a/pods/p").verb, "delete");
    assert.equal(parseRequestInfo("PATCH", "/api/v1/namespaces/a/pods/p").verb, "patch");
    assert.equal(parseRequestInfo("HEAD", "/api/v1/namespaces/a/pods/p").verb, "get");
    assert.equal(parseRequestInfo("OPTIONS", "/api/v1/namespaces/a/pods/p").verb, "");
  });

  it("parseRequestInfo() reads the legacy /watch/ form", () => {
    const info = parseRequestInfo("GET", "/apis/g.io/v1/watch/namespaces/ns/things/one");
    assert.equal(info.verb, "watch");
    assert.equal(info.namespace, "ns");
    assert.equal(info.resource, "things");
    assert.equal(info.name, "one");
    assert.equal(parseRequestInfo("GET", "/api/v1/watch/pods").verb, "watch");
  });

  it("parseRequestInfo() treats discovery and other paths as non-resource requests", () => {
    for (const path of [
      "/",
      "/api",
      "/api/v1",
      "/apis",
      "/apis/g.io",
      "/apis/g.io/v1",
      "/healthz",
      "/openapi/v3/apis/g/v1",
    ]) {
      const info = parseRequestInfo("GET", path);
      assert.equal(info.resourceRequest, false, path);
      assert.equal(info.verb, "get");
      assert.equal(info.path, path === "/" ? "/" : path);
    }
    assert.equal(parseRequestInfo("POST", "/version").verb, "post");
    assert.equal(parseRequestInfo("GET", "/healthz/?verbose").path, "/healthz");
  });

  it("parseRequestInfo() strips the /kubernetes/management prefix", () => {
    const info = parseRequestInfo("GET", "/kubernetes/management/apis/g.io/v1/users?limit=500", [
      "/kubernetes/management",
    ]);
    assert.equal(info.resource, "users");
    assert.equal(info.verb, "list");
    assert.equal(parseRequestInfo("GET", "/kubernetes/management", ["/kubernetes/management"]).path, "/");
    assert.equal(
      parseRequestInfo("GET", "/kubernetes/managementx/apis", ["/kubernetes/management"]).path,
      "/kubernetes/managementx/apis",
    );
  });

  it("parseRequestInfo() decodes escaped segments and rejects broken escapes with 400", () => {
    assert.equal(parseRequestInfo("GET", "/api/v1/namespaces/a/pods/p%2Dq").name, "p-q");
    assert.throws(
      () => parseRequestInfo("GET", "/api/v1/namespaces/a/pods/%E0%A4%A"),
      (error: unknown) => isStatusError(error) && error.code === 400,
    );
  });

  it("parseRequestInfo() round-trips generated resource paths", () => {
    const segment = fc
      .stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/)
      .filter((s) => !["watch", "namespaces", "status", "finalize"].includes(s));
    fc.assert(
      fc.property(
        fc.option(segment, { nil: undefined }),
        segment,
        fc.option(segment, { nil: undefined }),
        segment,
        fc.option(segment, { nil: undefined }),
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"),
        (group, resource, namespace, name, sub, method) => {
          const base = group ? `/apis/${group}/v1` : "/api/v1";
          const ns = namespace ? `/namespaces/${namespace}` : "";
          const tail = sub ? `/${sub}` : "";
          const info = parseRequestInfo(method, `${base}${ns}/${resource}/${name}${tail}`);
          assert.equal(info.resourceRequest, true);
          assert.equal(info.group, group ?? "");
          assert.equal(info.namespace, namespace ?? "");
          assert.equal(info.namespacedPath, namespace !== undefined);
          assert.equal(info.resource, resource);
          assert.equal(info.name, name);
          assert.equal(info.subresource, sub ?? "");
        },
      ),
    );
  });

  it("parseRequestInfo() never throws anything but a StatusError on arbitrary URLs", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom("GET", "POST", "DELETE", "TRACE"), (url, method) => {
        try {
          const info = parseRequestInfo(method, `/${url}`);
          assert.equal(typeof info.verb, "string");
        } catch (error) {
          assert.ok(isStatusError(error));
        }
      }),
    );
  });
});

describe("stripPathPrefix()", () => {
  it("stripPathPrefix() keeps the query and only strips whole segments", () => {
    assert.equal(stripPathPrefix("/p/apis?x=1", ["/p"]), "/apis?x=1");
    assert.equal(stripPathPrefix("/p?x=1", ["/p"]), "/?x=1");
    assert.equal(stripPathPrefix("/px/apis", ["/p"]), "/px/apis");
    assert.equal(stripPathPrefix("/apis", ["/p"]), "/apis");
  });
});
