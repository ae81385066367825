// One entry point: every request, resource or not, is authenticated, admitted by flow control, authorized and
// audited once, by the request pipeline (resource-pipeline.ts); fastify only routes and answers the non-resource
// requests the pipeline admitted. Over HTTPS against src/http/testing-api-server.ts (our real server over a TEST
// DOUBLE OF THE REGISTRY, with a plugin route as the platform's logins are).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestApiServer, type TestApiServer, USERS } from "./testing-api-server.ts";

let api: TestApiServer;

before(async () => {
  api = await startTestApiServer();
});

after(async () => {
  await api?.stop();
});

/** Sends a request and returns its answer with what the server did for it. */
async function traced(
  method: string,
  path: string,
  options: { token?: string | null; body?: string; audited?: boolean } = {},
) {
  const before = {
    authentications: api.authentications,
    received: api.received.length,
    completed: api.completed.length,
    fastify: api.fastifyRequests,
    plugin: api.pluginHandled,
  };
  const res = await api.call(method, path, options);
  // The completion is reported once the answer is out: wait for it, not for a time.
  if (options.audited !== false) {
    while (api.completed.length === before.completed) await new Promise((resolve) => setImmediate(resolve));
  }
  const received = api.received.slice(before.received);
  const completed = api.completed.slice(before.completed);
  return {
    res,
    authentications: api.authentications - before.authentications,
    received,
    completed,
    reachedFastify: api.fastifyRequests - before.fastify,
    handledByPlugin: api.pluginHandled - before.plugin,
  };
}

describe("startApiServer() entry point", () => {
  it("a plugin route is authenticated, audited and completed once, under one audit ID", async () => {
    const t = await traced("GET", "/whoami", { token: "alice-token" });
    assert.equal(t.res.status, 200, t.res.text);
    assert.deepEqual(t.res.json(), { user: "alice" });
    assert.equal(t.authentications, 1);
    assert.equal(t.received.length, 1);
    assert.equal(t.completed.length, 1);
    assert.equal(t.handledByPlugin, 1);
    const id = t.res.headers["audit-id"];
    assert.equal(t.received[0].id, id);
    assert.equal(t.completed[0].id, id);
    assert.equal(t.completed[0].code, 200);
    assert.equal(t.completed[0].user?.name, "alice");
  });

  it("a refused non-resource request never reaches fastify: 401 and 403 answered and audited by the pipeline", async () => {
    const anonymous = await traced("GET", "/whoami", { token: null });
    assert.equal(anonymous.res.status, 401);
    assert.equal(anonymous.res.json().kind, "Status");
    assert.equal(anonymous.reachedFastify, 0);
    assert.equal(anonymous.completed.length, 1);
    assert.equal(anonymous.completed[0].code, 401);

    const bob = await traced("GET", "/whoami", { token: "bob-token" });
    assert.equal(bob.res.status, 403, bob.res.text);
    assert.equal(bob.res.json().reason, "Forbidden");
    assert.equal(bob.reachedFastify, 0);
    assert.equal(bob.handledByPlugin, 0);
    assert.equal(bob.authentications, 1);
    assert.equal(bob.received.length, 1);
    assert.equal(bob.completed.length, 1);
    assert.equal(bob.completed[0].code, 403);
  });

  it("a plugin route's body reaches both the route and the audit event", async () => {
    const body = JSON.stringify({ username: "alice", password: "not-logged" });
    const t = await traced("POST", "/login", { token: null, body });
    assert.equal(t.res.status, 200, t.res.text);
    assert.deepEqual(t.res.json(), { user: "system:anonymous", bytes: Buffer.byteLength(body) });
    assert.equal(t.completed.length, 1);
    assert.equal(t.completed[0].requestBytes, Buffer.byteLength(body));
  });

  it("discovery and resource requests are each authenticated and completed once too", async () => {
    for (const path of ["/apis", USERS]) {
      const t = await traced("GET", path);
      assert.equal(t.res.status, 200, `${path}: ${t.res.text}`);
      assert.equal(t.authentications, 1, path);
      assert.equal(t.received.length, 1, path);
      assert.equal(t.completed.length, 1, path);
    }
  });

  it("a path that does not decode is a 400 Status from the pipeline, without reaching fastify", async () => {
    const t = await traced("GET", "/apis/a%zz/v1", { audited: false });
    assert.equal(t.res.status, 400, t.res.text);
    assert.equal(t.res.json().kind, "Status");
    assert.equal(t.reachedFastify, 0);
    assert.equal(t.authentications, 0, "nothing is asked of a request that names nothing");
  });
});
