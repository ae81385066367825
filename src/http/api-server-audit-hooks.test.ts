// The HTTP layer's side of audit: what the hooks receive (request URI, the decoded request body on demand, the
// object answered), in which order (RequestReceived, ResponseStarted for watches, ResponseComplete), for requests
// the resource pipeline serves and those fastify serves, and /version protected by a live decision.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { errors } from "../apimachinery/errors.ts";
import { ensureServingCertificates } from "../pki/tls.ts";
import { openTestRegistry, type TestRegistry } from "../registry/testing.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { type RunningApiServer, startApiServer } from "./api-server.ts";
import { MAX_BODY_BYTES } from "./error-status.ts";
import { rawTlsExchange } from "./testing-api-server.ts";
import { usersDefinition } from "./testing-definitions.ts";
import type { CompletedRequest, ReceivedRequest } from "./types.ts";

const USERS = "/kubernetes/management/apis/management.platform.sh/v1/users";

describe("startApiServer() audit hooks", () => {
  let dir: string;
  let env: TestRegistry;
  let server: RunningApiServer;
  let ca: string;
  let protectVersion = false;
  const completed: CompletedRequest[] = [];
  const started: ReceivedRequest[] = [];
  const received: ReceivedRequest[] = [];
  /** Every hook call in order, as "<stage> <audit ID>". */
  const stages: string[] = [];

  const call = (method: string, path: string, options: { token?: string; body?: string; type?: string } = {}) =>
    new Promise<{ status: number; body: string; auditId?: string }>((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.type) headers["content-type"] = options.type;
      const req = request(`${server.url}${path}`, { method, headers, ca }, (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
          if (path.includes("watch=1")) res.destroy();
        });
        res.on("close", () =>
          resolve({ status: res.statusCode ?? 0, body, auditId: res.headers["audit-id"] as string }),
        );
      });
      req.on("error", reject);
      req.end(options.body);
    });
  const completionWhere = async (match: (c: CompletedRequest) => boolean) => {
    await eventually(() => completed.some(match), "the request's completion");
    return completed.find(match) as CompletedRequest;
  };
  const completion = (auditId: string | undefined) => completionWhere((c) => c.id === auditId);

  /** Sends the body in the given parts (one write each); resolves at the response head's body end. */
  const send = (
    method: string,
    path: string,
    options: { token?: string; headers?: Record<string, string>; parts?: (string | Buffer)[] } = {},
  ) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const headers: Record<string, string> = { "user-agent": "audit-hooks-test/1.0", ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const req = request(`${server.url}${path}`, { method, headers, ca }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      // The server may answer (413) and close before the whole body is written.
      req.on("error", (error: NodeJS.ErrnoException) =>
        error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
      );
      const parts = options.parts ?? [];
      for (const part of parts.slice(0, -1)) req.write(part);
      req.end(parts.at(-1));
    });
  /** The hook calls for one audit ID, once its completion arrived. */
  const stagesOf = async (auditId: unknown) => {
    assert.equal(typeof auditId, "string", "the answer carries an Audit-Id");
    await completion(auditId as string);
    return stages.filter((s) => s.endsWith(` ${auditId}`)).map((s) => s.split(" ")[0]);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-hooks-"));
    const tls = await ensureServingCertificates({ dataDir: dir, hosts: ["127.0.0.1"] });
    ca = tls.caPem ?? "";
    env = await openTestRegistry([usersDefinition]);
    server = await startApiServer({
      resources: env.registry.stores(),
      authenticators: [
        {
          authenticate: async (r) => {
            const header = r.headers.authorization;
            if (header === undefined) return undefined;
            if (header === "Bearer good") return { name: "admin", groups: ["system:masters"] };
            throw errors.unauthorized();
          },
        },
      ],
      authorizer: { authorize: async () => ({ allowed: true }) },
      tls: { certPem: tls.certPem, keyPem: tls.keyPem },
      host: "127.0.0.1",
      port: 0,
      pathPrefixes: ["/kubernetes/management"],
      version: { major: "1", minor: "32" },
      authenticatePublicPath: (path) => path === "/version" && protectVersion,
      hooks: {
        onRequestReceived: (r) => {
          received.push(r);
          stages.push(`RequestReceived ${r.id}`);
        },
        onResponseStarted: (r) => {
          started.push(r);
          stages.push(`ResponseStarted ${r.id}`);
        },
        onRequestComplete: (c) => {
          completed.push(c);
          stages.push(`ResponseComplete ${c.id}`);
        },
      },
    });
  });
  after(async () => {
    await server?.close();
    await env?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("startApiServer() hands the completion hook the request URI, the decoded body on demand and the object answered", async () => {
    const body = JSON.stringify({
      apiVersion: "management.platform.sh/v1",
      kind: "User",
      metadata: { name: "alice" },
      spec: { email: "a@example.com" },
    });
    const created = await call("POST", `${USERS}?fieldManager=test`, { token: "good", body, type: "application/json" });
    assert.equal(created.status, 201);
    const c = await completion(created.auditId);
    assert.equal(c.requestUri, `${USERS}?fieldManager=test`);
    assert.equal(c.requestBytes, Buffer.byteLength(body));
    assert.deepEqual(c.requestObject?.(), JSON.parse(body));
    assert.equal((c.responseObject as { metadata: { name: string } }).metadata.name, "alice");

    const patched = await call("PATCH", `${USERS}/alice`, {
      token: "good",
      body: "spec:\n  email: b@example.com\n",
      type: "application/merge-patch+json",
    });
    assert.equal(patched.status, 400, "a merge patch is JSON");
    const failed = await completion(patched.auditId);
    assert.equal((failed.responseObject as { code: number }).code, 400, "a failure answers its Status");
    assert.throws(() => failed.requestObject?.());
  });

  it("startApiServer() reports ResponseStarted once a watch streams", async () => {
    const watched = await call("GET", `${USERS}?watch=1`, { token: "good" });
    assert.equal(watched.status, 200);
    await eventually(() => started.some((s) => s.id === watched.auditId), "the watch's ResponseStarted");
    const s = started.find((x) => x.id === watched.auditId);
    assert.equal(s?.requestInfo.verb, "watch");
  });

  it("startApiServer() authenticates a public path when the live decision says so", async () => {
    assert.equal((await call("GET", "/version")).status, 200);
    protectVersion = true;
    assert.equal((await call("GET", "/version")).status, 401);
    assert.equal((await call("GET", "/version", { token: "bad" })).status, 401);
    assert.equal((await call("GET", "/version", { token: "good" })).status, 200);
    assert.equal((await call("GET", "/healthz")).status, 200);
    protectVersion = false;
    assert.equal((await call("GET", "/version")).status, 200);
  });
  it("startApiServer() reports a read's stages in order, with the Audit-Id it answers and the object decoded on demand", async () => {
    const got = await send("GET", `${USERS}/alice?pretty=false`, { token: "good" });
    assert.equal(got.status, 200);
    assert.deepEqual(await stagesOf(got.headers["audit-id"]), ["RequestReceived", "ResponseComplete"]);
    const r = received.find((x) => x.id === got.headers["audit-id"]);
    assert.equal(r?.method, "GET");
    assert.equal(r?.requestUri, `${USERS}/alice?pretty=false`);
    assert.equal(r?.requestInfo.verb, "get");
    assert.equal(r?.user?.name, "admin");
    assert.equal(r?.userAgent, "audit-hooks-test/1.0");
    assert.equal(r?.sourceIp, "127.0.0.1");
    const c = await completion(got.headers["audit-id"] as string);
    assert.equal(c.code, 200);
    assert.equal(c.requestBytes, undefined);
    assert.equal(c.requestObject, undefined);
    assert.equal(c.reason, undefined);
    assert.deepEqual(c.responseObject, JSON.parse(got.body));
  });

  it("startApiServer() reports a watch as RequestReceived, ResponseStarted, then ResponseComplete when it ends", async () => {
    const watched = await send("GET", `${USERS}?watch=true&timeoutSeconds=1`, { token: "good" });
    assert.equal(watched.status, 200);
    assert.match(watched.body, /"type":"ADDED"/);
    assert.deepEqual(await stagesOf(watched.headers["audit-id"]), [
      "RequestReceived",
      "ResponseStarted",
      "ResponseComplete",
    ]);
    const c = await completion(watched.headers["audit-id"] as string);
    assert.equal(c.code, 200);
    assert.equal(c.requestInfo.verb, "watch");
    // A watch the store refuses completes with its Status and never starts.
    const refusedUri = `${USERS}?watch=true&labelSelector=a%20in%20(`;
    const refused = await send("GET", refusedUri, { token: "good" });
    assert.equal(refused.status, 400);
    const r = await completionWhere((c) => c.requestUri === refusedUri);
    assert.deepEqual(await stagesOf(r.id), ["RequestReceived", "ResponseComplete"]);
    assert.equal(r.reason, "BadRequest");
  });

  it("startApiServer() reports a refused caller without RequestReceived, and fastify's paths alike", async () => {
    const denied = await send("GET", USERS, { token: "bad" });
    assert.equal(denied.status, 401);
    assert.deepEqual(await stagesOf(denied.headers["audit-id"]), ["ResponseComplete"]);
    const c = await completion(denied.headers["audit-id"] as string);
    assert.equal(c.user, undefined);
    assert.equal(c.reason, "Unauthorized");
    assert.equal((c.responseObject as { code: number }).code, 401);

    // Successful non-resource answers carry no Audit-Id (as before); the hooks hear of them all the same.
    const version = await send("GET", "/kubernetes/management/version");
    assert.equal(version.status, 200);
    const v = await completionWhere((c) => c.requestUri === "/kubernetes/management/version");
    assert.deepEqual(await stagesOf(v.id), ["RequestReceived", "ResponseComplete"]);
    assert.equal(v.requestInfo.resourceRequest, false);
    assert.equal(v.requestUri, "/kubernetes/management/version");
    assert.equal(v.user?.name, "system:anonymous");
  });

  it("startApiServer() audits a chunked body like any other", async () => {
    const object = { apiVersion: "management.platform.sh/v1", kind: "User", metadata: { name: "chunky" } };
    const text = JSON.stringify(object);
    const created = await send("POST", USERS, {
      token: "good",
      headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      parts: [text.slice(0, 20), text.slice(20)],
    });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(await stagesOf(created.headers["audit-id"]), ["RequestReceived", "ResponseComplete"]);
    const c = await completion(created.headers["audit-id"] as string);
    assert.equal(c.requestBytes, Buffer.byteLength(text));
    assert.deepEqual(c.requestObject?.(), object);
    assert.equal((c.responseObject as { metadata: { name: string } }).metadata.name, "chunky");
  });

  it("startApiServer() answers 413 to an oversize body, declared or streamed, closes the connection and audits it", async () => {
    const big = Buffer.alloc(MAX_BODY_BYTES + 1, 32);
    const declared = await send("POST", USERS, {
      token: "good",
      headers: { "content-type": "application/json", "content-length": String(big.length) },
      parts: [big],
    });
    assert.equal(declared.status, 413);
    assert.equal(declared.headers.connection, "close");
    // Refused before authentication: no RequestReceived, no user.
    assert.deepEqual(await stagesOf(declared.headers["audit-id"]), ["ResponseComplete"]);
    assert.equal((await completion(declared.headers["audit-id"] as string)).user, undefined);

    const streamed = await send("POST", USERS, {
      token: "good",
      headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      parts: [big.subarray(0, MAX_BODY_BYTES), big.subarray(MAX_BODY_BYTES)],
    });
    assert.equal(streamed.status, 413);
    assert.equal(streamed.headers.connection, "close");
    assert.equal(JSON.parse(streamed.body).message, "Request entity too large: limit is 3145728");
    assert.deepEqual(await stagesOf(streamed.headers["audit-id"]), ["RequestReceived", "ResponseComplete"]);
    const c = await completion(streamed.headers["audit-id"] as string);
    assert.equal(c.code, 413);
    assert.equal(c.reason, "RequestEntityTooLarge");
    assert.equal(c.requestBytes, undefined);
  });

  it("startApiServer() answers a body cut short of its Content-Length with 400 and reports the request", async () => {
    const answer = await rawTlsExchange({
      port: server.port,
      ca,
      servername: "127.0.0.1",
      payload:
        `POST ${USERS}?cut=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nContent-Type: application/json\r\n` +
        `Content-Length: 100\r\n\r\n{"metadata":`,
    });
    assert.match(answer, /^HTTP\/1.1 400 Bad Request\r\n/);
    assert.equal(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).kind, "Status");
    const c = await completionWhere((x) => x.requestUri === `${USERS}?cut=1`);
    assert.equal(c.requestInfo.verb, "create");
    assert.equal(c.code, 400);
    assert.deepEqual(await stagesOf(c.id), ["RequestReceived", "ResponseComplete"]);
  });
});
