// Every API route, over real HTTPS, refuses a missing, malformed, unknown, disabled, expired, disabled-user,
// deleted-user and revoked key with a 401 Status that says why. Routes come from discovery, so resources added
// later are covered too.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually } from "./support/kubectl.ts";

interface Route {
  method: string;
  path: string;
}

describe("every route refuses bad credentials with 401", () => {
  let dataDir: string;
  let platform: RunningPlatform;
  let client: AuthClient;
  let admin: string;
  const routes: Route[] = [];
  const bad: { what: string; authorization?: string; message: RegExp }[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-auth-401-"));
    platform = await startPlatform({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      auth: { scrypt: { N: 1024, r: 8, p: 1 } },
    });
    client = new AuthClient(platform.url, await readFile(join(dataDir, "pki", "ca.crt"), "utf8"));
    admin = platform.createdAdminKey!;
    // First, so that its one second of life passes while the rest is set up.
    await client.createUser(admin, "bob");
    const expired = await client.createKey(admin, "expired", { user: "bob", ttl: 1 });

    const discovery = (await client.send("GET", API, { token: admin })).json();
    for (const resource of discovery.resources as { name: string; verbs: string[] }[]) {
      const [plural, sub] = resource.name.split("/");
      if (sub) {
        routes.push(
          { method: "GET", path: `${API}/${plural}/x/${sub}` },
          { method: "POST", path: `${API}/${plural}/x/${sub}` },
        );
        routes.push({ method: "PUT", path: `${API}/${plural}/x/${sub}` });
        continue;
      }
      for (const method of ["GET", "POST", "DELETE"]) routes.push({ method, path: `${API}/${plural}` });
      routes.push({ method: "GET", path: `${API}/${plural}?watch=true` });
      for (const method of ["GET", "PUT", "PATCH", "DELETE"]) routes.push({ method, path: `${API}/${plural}/x` });
    }
    routes.push(
      { method: "GET", path: "/apis" },
      { method: "GET", path: "/api" },
      { method: "GET", path: API },
      { method: "GET", path: "/openapi/v3" },
      { method: "GET", path: "/metrics" },
      { method: "POST", path: "/auth/logout" },
      { method: "GET", path: `/kubernetes/management${API}/users` },
    );

    await client.createUser(admin, "gone");
    const key = (name: string, spec = {}) => client.createKey(admin, name, { user: "bob", ...spec });
    const disabled = await key("disabled", { disabled: true });
    const disabledUser = await client.createKey(admin, "disabled-user", { user: "gone" });
    await client.send("PATCH", `${API}/users/gone`, {
      token: admin,
      body: { spec: { disabled: true } },
      contentType: "application/merge-patch+json",
    });
    await client.createUser(admin, "deleted");
    const deletedUser = await client.createKey(admin, "deleted-user", { user: "deleted" });
    await client.send("DELETE", `${API}/users/deleted`, { token: admin });
    assert.equal((await client.setPassword(admin, "bob", "bob-password-1")).status, 201);
    const revoked = (await client.login("bob", "bob-password-1")).json().accessKey;
    assert.equal((await client.setPassword(admin, "bob", "bob-password-2")).status, 201);
    // The ttl counts whole seconds from the creation timestamp: wait until the key has expired.
    await eventually(
      async () => (await client.send("GET", `${API}/ownedaccesskeys`, { token: expired })).status === 401,
      "the 1-second key to expire",
    );

    bad.push(
      { what: "missing", message: /^Unauthorized$/ },
      { what: "malformed (Basic)", authorization: "Basic Ym9iOnNlY3JldA==", message: /invalid bearer token/ },
      { what: "malformed (empty Bearer)", authorization: "Bearer ", message: /invalid bearer token/ },
      { what: "unknown", authorization: "Bearer this-key-was-never-issued-by-the-platform", message: /not found/ },
      { what: "disabled", authorization: `Bearer ${disabled}`, message: /access key is disabled/ },
      { what: "expired", authorization: `Bearer ${expired}`, message: /access key expired/ },
      { what: "disabled user", authorization: `Bearer ${disabledUser}`, message: /user is disabled/ },
      { what: "deleted user", authorization: `Bearer ${deletedUser}`, message: /no longer exists|not found/ },
      { what: "revoked login", authorization: `Bearer ${revoked}`, message: /revoked|not found/ },
    );
  });
  after(async () => {
    client?.close();
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("discovery lists the auth resources and their subresources", () => {
    const paths = routes.map((r) => r.path);
    for (const expected of [
      "ownedaccesskeys",
      "teams",
      "selves",
      "selfsubjectaccessreviews",
      "users/x/password",
      "users/x/accesskeys",
      "teams/x/accesskeys",
    ]) {
      assert.ok(
        paths.some((p) => p.endsWith(`/${expected}`)),
        expected,
      );
    }
  });

  it("every route answers each bad credential with a 401 Status saying why", async () => {
    let checked = 0;
    for (const credential of bad) {
      for (const route of routes) {
        const body = route.method === "POST" || route.method === "PUT" || route.method === "PATCH" ? {} : undefined;
        const reply = await client.send(route.method, route.path, {
          authorization: credential.authorization,
          body,
          contentType: route.method === "PATCH" ? "application/merge-patch+json" : undefined,
        });
        const what = `${credential.what}: ${route.method} ${route.path}`;
        assert.equal(reply.status, 401, `${what} -> ${reply.status} ${reply.body}`);
        const status = reply.json();
        assert.equal(status.kind, "Status", what);
        assert.equal(status.reason, "Unauthorized", what);
        assert.match(status.message, credential.message, what);
        checked++;
      }
    }
    assert.ok(checked > 300, `checked ${checked}`);
  });

  it("open endpoints stay open and the admin key works", async () => {
    assert.equal((await client.send("GET", "/healthz")).status, 200);
    assert.equal((await client.send("GET", "/version")).status, 200);
    assert.equal((await client.send("GET", `${API}/users`, { token: admin })).status, 200);
  });
});
