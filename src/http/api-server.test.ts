// HTTPS integration test of the API server (src/http/testing-api-server.ts: our real server over a TEST DOUBLE OF THE
// REGISTRY): TLS, routing, auth, codecs, watch framing, non-resource paths, plugin routes, metrics and shutdown.

import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { successStatus } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import {
  alice,
  type CallOptions,
  GROUP,
  rawTlsExchange,
  startTestApiServer,
  type TestApiServer,
  USERS,
} from "./testing-api-server.ts";

const MAX = 3 * 1024 * 1024;

let api: TestApiServer;
const call = (method: string, path: string, options?: CallOptions) => api.call(method, path, options);
const openWatch = (path: string, headers?: Record<string, string>) => api.openWatch(path, headers);

before(async () => {
  api = await startTestApiServer();
});

after(async () => {
  await api?.stop();
});

describe("startApiServer()", () => {
  it("startApiServer() answers 401 Status without a token and with an unknown one", async () => {
    for (const token of [null, "wrong"]) {
      const res = await call("GET", USERS, { token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json(), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401,
      });
    }
  });

  it("startApiServer() passes a verified client certificate to the authenticators", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${api.server.url}${USERS}`, { ca: api.ca, ...api.clientCert }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 200);
  });

  it("startApiServer() runs plugin routes inside the pipeline, public or authenticated, also under the prefix", async () => {
    const login = await call("POST", "/kubernetes/management/login", { token: null, body: '{"password":"x"}' });
    assert.equal(login.status, 200);
    assert.deepEqual(login.json(), { user: "system:anonymous", bytes: 16 });
    assert.equal((await call("GET", "/whoami", { token: null })).status, 401);
    assert.equal((await call("GET", "/whoami", { token: "bob-token" })).status, 403);
    assert.deepEqual((await call("GET", "/whoami")).json(), { user: "admin" });
  });

  it("startApiServer() answers the authorizer's denial as an upstream-worded 403", async () => {
    const res = await call("GET", `${USERS}/alice`, { token: "bob-token" });
    assert.equal(res.status, 403);
    assert.equal(
      res.json().message,
      `users.${GROUP} "alice" is forbidden: User "bob" cannot get resource "users" in API group "${GROUP}" at the cluster scope: no rule allows it`,
    );
  });

  it("startApiServer() creates, reads, lists and deletes through the registry, also under the mount prefix", async () => {
    const created = await call("POST", USERS, { body: JSON.stringify(alice) });
    assert.equal(created.status, 201);
    assert.equal(created.headers["content-type"], "application/json");
    const got = await call("GET", `/kubernetes/management${USERS}/alice`);
    assert.equal(got.status, 200);
    assert.equal((got.json().metadata as { uid: string }).uid, "uid-alice");
    const list = await call("GET", `${USERS}?limit=500`);
    assert.equal(list.status, 200);
    assert.equal((list.json().items as unknown[]).length, 1);

    await call("POST", USERS, { body: JSON.stringify({ ...alice, metadata: { name: "temp" } }) });
    const deleted = await call("DELETE", `${USERS}/temp`, {
      body: JSON.stringify({ kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", propagationPolicy: "Background" }),
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.json(), successStatus({ name: "temp", group: GROUP, kind: "users", uid: "uid-temp" }));
    assert.equal((await call("GET", `${USERS}/temp`)).status, 404);
  });

  it("startApiServer() answers a pending deletion with the object", async () => {
    await call("POST", USERS, { body: JSON.stringify({ ...alice, metadata: { name: "fin", finalizers: ["x/y"] } }) });
    const res = await call("DELETE", `${USERS}/fin`);
    assert.equal(res.status, 200);
    assert.equal(res.json().kind, "User");
    assert.ok((res.json().metadata as { deletionTimestamp?: string }).deletionTimestamp);
  });

  it("startApiServer() answers 404 for unknown paths, groups and resources", async () => {
    for (const path of [
      "/nope",
      `/apis/${GROUP}/v2/users`,
      `/apis/${GROUP}/v1/nothings`,
      "/apis/other.io",
      "/api/v2",
    ]) {
      const res = await call("GET", path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json().message, "the server could not find the requested resource");
    }
    assert.equal((await call("GET", `/apis/${GROUP}/v1/namespaces/a/users`)).status, 404);
    assert.equal((await call("GET", "/api/v1/widgets/w")).status, 404);
  });

  it("startApiServer() answers 405 for verbs a resource does not serve", async () => {
    const res = await call("DELETE", "/api/v1/namespaces/a/widgets/w");
    assert.equal(res.status, 405);
    assert.equal(res.json().reason, "MethodNotAllowed");
    assert.equal(res.json().message, 'delete is not supported on resources of kind "widgets"');
    assert.equal((await call("GET", `/apis/${GROUP}/v1/selves`)).status, 405);
  });

  it("startApiServer() answers 500 InternalError to unexpected exceptions and logs them without request data", async () => {
    const res = await call("GET", `${USERS}/boom?token=query-secret`);
    assert.equal(res.status, 500);
    assert.equal(res.json().reason, "InternalError");
    assert.doesNotMatch(res.text, /secret-value-123/);
    assert.match(api.logLines, /internal error serving request/);
    assert.doesNotMatch(api.logLines, /query-secret|admin-token/);
  });

  it("startApiServer() answers 503 'the server is shutting down' when the store closed under a request", async () => {
    const res = await call("GET", `${USERS}/closed`);
    assert.equal(res.status, 503);
    assert.equal(res.json().kind, "Status");
    assert.equal(res.json().reason, "ServiceUnavailable");
    assert.equal(res.json().message, "the server is shutting down");
  });

  it("startApiServer() answers HEAD like GET without a body", async () => {
    const res = await call("HEAD", `${USERS}/alice`);
    assert.equal(res.status, 200);
    assert.equal(res.text, "");
    assert.equal(res.headers["content-type"], "application/json");
    const got = await call("GET", `${USERS}/alice`);
    assert.equal(res.headers["content-length"], String(Buffer.byteLength(got.text)));
  });

  it("startApiServer() answers 406 for an Accept it cannot serve", async () => {
    const res = await call("GET", `${USERS}/alice`, { headers: { accept: "text/html" } });
    assert.equal(res.status, 406);
    assert.equal(res.json().reason, "NotAcceptable");
    assert.equal((await call("GET", `${USERS}/alice`, { headers: { accept: "*/*" } })).status, 200);
  });

  it("startApiServer() answers 413 above 3 MiB, declared or streamed", async () => {
    const limitBody = Buffer.alloc(MAX + 1, 32);
    const res = await call("POST", USERS, { body: limitBody });
    assert.equal(res.status, 413);
    assert.equal(res.json().message, "Request entity too large: limit is 3145728");
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${api.server.url}${USERS}`, {
        method: "POST",
        ca: api.ca,
        headers: {
          authorization: "Bearer admin-token",
          "content-type": "application/json",
          "transfer-encoding": "chunked",
        },
      });
      req.on("response", (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on("error", (error) =>
        error.message.includes("EPIPE") || error.message.includes("ECONNRESET") ? undefined : reject(error),
      );
      req.write(limitBody.subarray(0, MAX));
      req.end(limitBody.subarray(MAX));
    });
    assert.equal(streamed, 413);
  });

  it("startApiServer() answers 415 to strategic merge patches", async () => {
    const res = await call("PATCH", `${USERS}/alice`, {
      body: "{}",
      headers: { "content-type": "application/strategic-merge-patch+json" },
    });
    assert.equal(res.status, 415);
    assert.equal(
      res.json().message,
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
    const merged = await call("PATCH", `${USERS}/alice`, {
      body: '{"spec":{"email":"a@b.c"}}',
      headers: { "content-type": "application/merge-patch+json" },
    });
    assert.equal(merged.status, 200);
  });

  it("startApiServer() answers 400 to malformed JSON and YAML and 422 to bad options", async () => {
    const json = await call("POST", USERS, { body: '{"metadata": ' });
    assert.equal(json.status, 400);
    assert.match(String(json.json().message), /not valid JSON/);
    const yaml = await call("POST", USERS, { body: "metadata: [\n", headers: { "content-type": "application/yaml" } });
    assert.equal(yaml.status, 400);
    assert.match(String(yaml.json().message), /not valid YAML at line/);
    const force = await call("PATCH", `${USERS}/alice?force=true`, {
      body: "{}",
      headers: { "content-type": "application/merge-patch+json" },
    });
    assert.equal(force.status, 422);
    assert.match(String(force.json().message), /force: Forbidden: may not be specified for non-apply patch/);
    assert.equal((await call("GET", `${USERS}?limit=x`)).status, 400);
    const badUrl = await call("GET", `${USERS}/%E0%A4%A`);
    assert.equal(badUrl.status, 400);
    assert.equal(badUrl.json().kind, "Status");
  });

  it("startApiServer() reads YAML bodies and answers YAML when asked", async () => {
    const created = await call("POST", USERS, {
      body: `apiVersion: ${GROUP}/v1\nkind: User\nmetadata:\n  name: yaml-user\n`,
      headers: { "content-type": "application/yaml", accept: "application/yaml" },
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers["content-type"], "application/yaml");
    assert.match(created.text, /^apiVersion: test.platform.sh\/v1\nkind: User\nmetadata:\n {2}name: yaml-user\n/);
  });

  it("startApiServer() answers Tables to kubectl get", async () => {
    const accept =
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    const res = await call("GET", `${USERS}?limit=500`, { headers: { accept } });
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/json;as=Table;v=v1;g=meta.k8s.io");
    const table = res.json() as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string } }[];
    };
    assert.equal(table.kind, "Table");
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ["Name", "Email", "Age"],
    );
    const row = table.rows.find((r) => r.cells[0] === "alice");
    assert.ok(row);
    assert.equal(row.object.kind, "PartialObjectMetadata");
    const one = await call("GET", `${USERS}/alice?includeObject=Object`, { headers: { accept } });
    assert.equal((one.json() as { rows: { object: { kind: string } }[] }).rows[0].object.kind, "User");
  });

  it("startApiServer() indents JSON with pretty=true", async () => {
    const res = await call("GET", `${USERS}/alice?pretty=true`);
    assert.match(res.text, /^\{\n {2}"apiVersion"/);
  });

  it("startApiServer() sends registry warnings as Warning headers", async () => {
    const res = await call("POST", USERS, {
      body: JSON.stringify({ ...alice, metadata: { name: "warned" }, spec: { unknown: 1 } }),
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.warning, '299 - "unknown field \\"spec.unknown\\""');
  });

  it("startApiServer() serves create-only resources and create subresources with 201", async () => {
    const self = await call("POST", `/apis/${GROUP}/v1/selves`, {
      body: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: "Self", metadata: {} }),
    });
    assert.equal(self.status, 201);
    assert.deepEqual(self.json().status, { user: "admin" });
    const kubeconfig = await call("POST", `${USERS}/alice/kubeconfig`, { body: "{}" });
    assert.equal(kubeconfig.status, 201);
    assert.deepEqual(kubeconfig.json().status, { for: "alice" });
    assert.equal((await call("POST", `${USERS}/ghost/kubeconfig`, { body: "{}" })).status, 404);
    assert.equal((await call("GET", `${USERS}/alice/kubeconfig`)).status, 405);
    assert.equal((await call("GET", `${USERS}/alice/status`)).status, 200);
    assert.equal((await call("GET", `${USERS}/alice/other`)).status, 404);
  });

  it("startApiServer() flushes watch headers before the first event and frames one event per line", async () => {
    const list = await call("GET", USERS);
    const rv = (list.json().metadata as { resourceVersion: string }).resourceVersion;
    const watch = openWatch(`${USERS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    // The head arrives although no event exists yet (kubectl wait/delete depend on it).
    const head = await watch.head;
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers["content-type"], "application/json");
    assert.equal(head.headers["transfer-encoding"], "chunked");
    assert.equal(watch.lines.length, 0);
    await call("POST", USERS, { body: JSON.stringify({ ...alice, metadata: { name: "watched" } }) });
    const [event] = await watch.nextLines(1);
    assert.equal(event.type, "ADDED");
    assert.equal((event.object as KubeObject).metadata.name, "watched");
    watch.abort();
  });

  it("startApiServer() streams one-row Tables to kubectl get -w and ends at timeoutSeconds", async () => {
    const watch = openWatch(`${USERS}?watch=true&fieldSelector=metadata.name%3Dalice&timeoutSeconds=1`, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    const [event] = await watch.nextLines(1);
    assert.equal(event.type, "ADDED");
    const table = event.object as { kind: string; rows: unknown[] };
    assert.equal(table.kind, "Table");
    assert.ok(table.rows.length >= 1);
    await watch.ended();
  });

  it("startApiServer() answers a watch the store refuses with a Status", async () => {
    const res = await call("GET", `${USERS}?watch=true&labelSelector=!!`);
    assert.equal(res.status, 400);
    assert.equal(res.json().reason, "BadRequest");
  });

  it("startApiServer() serves discovery, OpenAPI, version and health", async () => {
    const aggregated = await call("GET", "/apis", {
      headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json" },
    });
    assert.equal(
      aggregated.headers["content-type"],
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    );
    assert.equal(aggregated.json().kind, "APIGroupDiscoveryList");
    assert.equal((await call("GET", "/apis")).json().kind, "APIGroupList");
    assert.equal((await call("GET", `/apis/${GROUP}/v1`)).json().kind, "APIResourceList");
    assert.equal((await call("GET", "/api/v1")).json().kind, "APIResourceList");
    assert.equal((await call("GET", "/api")).json().kind, "APIVersions");
    assert.ok((((await call("GET", "/")).json().paths as string[]) ?? []).includes(`/apis/${GROUP}/v1`));

    const index = await call("GET", "/openapi/v3");
    const paths = index.json().paths as Record<string, { serverRelativeURL: string }>;
    const url = paths[`apis/${GROUP}/v1`].serverRelativeURL;
    const doc = await call("GET", url);
    assert.equal(doc.status, 200);
    assert.equal(doc.headers["cache-control"], "public, immutable");
    const etag = String(doc.headers.etag);
    assert.equal((await call("GET", url, { headers: { "if-none-match": etag } })).status, 304);
    const v2 = await call("GET", "/openapi/v2");
    assert.equal(v2.status, 200);
    const v2Protobuf = await call("GET", "/openapi/v2", {
      headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" },
    });
    assert.equal(v2Protobuf.status, 200);
    assert.equal(v2Protobuf.headers["content-type"], "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    assert.ok(v2Protobuf.text.startsWith("\n\u00032.0"), "field 1 (swagger) comes first");
    assert.equal(v2Protobuf.headers.etag, v2.headers.etag, "one ETag, told apart by Vary: Accept");
    assert.equal(v2Protobuf.headers.vary, "Accept");
    const v2Refused = await call("GET", "/openapi/v2", { headers: { accept: "application/vnd.kubernetes.protobuf" } });
    assert.equal(v2Refused.status, 406);
    assert.match(String(v2Refused.json().message), /application\/com\.github\.proto-openapi\.spec\.v2@v1\.0\+protobuf/);

    const version = await call("GET", "/version", { token: null });
    assert.deepEqual(version.json(), { major: "1", minor: "32", gitVersion: "v1.32.0-platform" });
    const healthz = await call("GET", "/healthz", { token: null });
    assert.equal(healthz.text, "ok");
    const verbose = await call("GET", "/readyz?verbose", { token: null });
    assert.equal(verbose.status, 200);
    assert.equal(verbose.text, "[+]ping ok\n[+]storage ok\n[+]shutdown ok\nreadyz check passed\n");
    assert.equal((await call("GET", "/kubernetes/management/livez", { token: null })).text, "ok");
    assert.equal((await call("GET", "/metrics", { token: null })).status, 401);
  });

  it("startApiServer() reports requests in /metrics and to the completion hook", async () => {
    const res = await call("GET", "/metrics");
    assert.equal(res.status, 200);
    assert.match(
      res.text,
      /apiserver_request_total\{verb="GET",group="test.platform.sh",resource="users",subresource="",code="200"\} \d+/,
    );
    assert.match(res.text, /apiserver_request_duration_seconds_bucket/);
    assert.match(res.text, /apiserver_longrunning_requests/);
    const denied = api.completed.find((c) => c.code === 403);
    assert.ok(denied);
    assert.equal(denied.user?.name, "bob");
    assert.equal(denied.reason, "Forbidden");
    assert.doesNotMatch(api.logLines, /admin-token|bob-token/);
  });

  it("startApiServer() answers malformed HTTP with a Status", async () => {
    const answer = await rawTlsExchange({
      port: api.server.port,
      ca: api.ca,
      servername: "localhost",
      payload: "NOT-HTTP\r\n\r\n",
    });
    assert.match(answer, /^HTTP\/1.1 400 Bad Request\r\n/);
    assert.equal(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).kind, "Status");
  });

  it("startApiServer() close() ends open watches, finishes requests in flight and answers 503 meanwhile", async () => {
    const watch = openWatch(`${USERS}?watch=true&resourceVersion=999999`);
    await watch.head;
    // A read the store holds, then a second request on the same connection once close() has begun.
    let answers = "";
    const socket = tlsConnect({ host: "127.0.0.1", port: api.server.port, ca: api.ca, servername: "localhost" });
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answers += chunk;
    });
    const socketClosed = new Promise((resolve) => socket.on("close", resolve));
    const get = (name: string) =>
      `GET ${USERS}/${name} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\n\r\n`;
    socket.write(get("slow"));
    while (api.slow.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closed = api.server.close();
    await watch.ended();
    socket.write(get("alice"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    api.slow.shift()?.();
    await closed;
    await socketClosed;
    const [first, second] = answers.split(/(?=HTTP\/1\.1 )/);
    assert.match(first, /^HTTP\/1.1 404 Not Found\r\n/, "the read in flight is answered");
    assert.match(second, /^HTTP\/1.1 503 Service Unavailable\r\nconnection: close\r\n/);
    assert.equal(JSON.parse(second.slice(second.indexOf("\r\n\r\n") + 4)).message, "the server is shutting down");
    assert.equal((await api.server.close()) ?? "closed", "closed");
  });
});
