// The HTTP layer's side of audit: what the hooks receive (request URI, the decoded request body on demand, the
// object answered), ResponseStarted for watches, and /version protected by a live decision.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { errors } from "../apimachinery/errors.ts";
import { ensureServingCertificates } from "../pki/tls.ts";
import { openTestRegistry, type TestRegistry } from "../registry/testing.ts";
import { type RunningApiServer, startApiServer } from "./api-server.ts";
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
  const completion = async (auditId: string | undefined) => {
    for (let i = 0; i < 100; i++) {
      const found = completed.find((c) => c.id === auditId);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error("no completion");
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
      hooks: { onRequestComplete: (c) => completed.push(c), onResponseStarted: (r) => started.push(r) },
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
    for (let i = 0; i < 100 && !started.some((s) => s.id === watched.auditId); i++)
      await new Promise((r) => setTimeout(r, 10));
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
});
