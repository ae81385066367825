// Access keys, roles, scopes and password login over real HTTPS, as attackers try them: reading or inferring another
// user's keys, escalating roles or scopes through PUT, PATCH or a key's own scope, scoped keys reaching beyond their
// scope, and guessing passwords.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { defaultSettings, LiveSettings } from "../src/config/settings.ts";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually } from "./support/kubectl.ts";

const MERGE = "application/merge-patch+json";
const JSON_PATCH = "application/json-patch+json";

describe("access keys, roles and scopes over HTTPS", () => {
  let dataDir: string;
  let platform: RunningPlatform;
  let client: AuthClient;
  let settings: LiveSettings;
  let admin: string;
  let bob: string;
  let carol: string;

  const send = (...args: Parameters<AuthClient["send"]>) => client.send(...args);
  const setSettings = (change: (auth: ReturnType<LiveSettings["current"]>["auth"]) => void) => {
    const next = structuredClone(settings.current());
    change(next.auth);
    settings.update(next);
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-access-keys-"));
    settings = new LiveSettings(defaultSettings());
    platform = await startPlatform({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      settings,
      auth: { scrypt: { N: 1024, r: 8, p: 1 }, throttle: { failuresPerUsername: 3, failuresPerAddress: 50 } },
    });
    client = new AuthClient(platform.url, await readFile(join(dataDir, "pki", "ca.crt"), "utf8"));
    admin = platform.createdAdminKey!;
    await client.createUser(admin, "bob", { email: "bob@example.com", displayName: "Bob" });
    await client.createUser(admin, "carol");
    await client.createUser(admin, "vic", { clusterRoles: [{ name: "viewer" }] });
    bob = await client.createKey(admin, "bob-main", { user: "bob" });
    carol = await client.createKey(admin, "carol-main", { user: "carol" });
  });
  after(async () => {
    client?.close();
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("the bootstrap admin is a real OwnedAccessKey with a password", async () => {
    const key = (await send("GET", `${API}/ownedaccesskeys/admin-bootstrap`, { token: admin })).json();
    assert.equal(key.spec.user, "admin");
    assert.equal(key.spec.key, undefined);
    const login = await client.login("admin", (await readFile(join(dataDir, "admin-password"), "utf8")).trim());
    assert.equal(login.status, 200);
    assert.equal(login.json().user, "admin");
  });

  it("a user creates its own key, sees it once, and lists and watches only its own keys", async () => {
    const created = await send("POST", `${API}/ownedaccesskeys`, {
      token: bob,
      body: { metadata: { name: "bob-ci" }, spec: { displayName: "Bob CI" } },
    });
    assert.equal(created.status, 201);
    const plain = created.json().spec.key;
    assert.match(plain, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(created.json().spec.user, "bob");
    const read = await send("GET", `${API}/ownedaccesskeys/bob-ci`, { token: bob });
    assert.equal(read.json().spec.key, undefined);
    assert.equal(read.body.includes(plain), false);
    const listed = (await send("GET", `${API}/ownedaccesskeys`, { token: bob })).json();
    assert.deepEqual(listed.items.map((k: { metadata: { name: string } }) => k.metadata.name).sort(), [
      "bob-ci",
      "bob-main",
    ]);
    const events = await client.watch(`${API}/ownedaccesskeys?watch=true`, bob, 2);
    assert.deepEqual(events.map((line) => JSON.parse(line).object.metadata.name).sort(), ["bob-ci", "bob-main"]);
    assert.equal((await send("GET", `${API}/users/bob/accesskeys`, { token: bob })).json().accessKeys.length, 2);
    // The new key works at once.
    assert.equal((await send("POST", `${API}/selves`, { token: plain, body: {} })).status, 201);
  });

  it("a key disabled or deleted while a keep-alive connection keeps presenting it is refused on that connection", async () => {
    const key = await client.createKey(admin, "bob-keepalive", { user: "bob" });
    // One socket for every request: the per-connection digest cache must never outlive the key's validity.
    const oneConnection = new Agent({
      keepAlive: true,
      maxSockets: 1,
      ca: (client.agent.options as { ca?: string }).ca,
    });
    const ports = new Set<number>();
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          `${platform.url}${API}/ownedaccesskeys`,
          { headers: { authorization: `Bearer ${key}` }, agent: oneConnection },
          (res) => {
            ports.add(res.socket.localPort ?? 0);
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end();
      });
    try {
      assert.equal(await get(), 200);
      const disable = (disabled: boolean) =>
        send("PATCH", `${API}/ownedaccesskeys/bob-keepalive`, {
          token: admin,
          body: { spec: { disabled } },
          contentType: MERGE,
        });
      assert.equal((await disable(true)).status, 200);
      assert.equal(await get(), 401);
      assert.equal((await disable(false)).status, 200);
      assert.equal(await get(), 200);
      assert.equal((await send("DELETE", `${API}/ownedaccesskeys/bob-keepalive`, { token: admin })).status, 200);
      assert.equal(await get(), 401);
      assert.equal(ports.size, 1, "every request went over the same connection");
    } finally {
      oneConnection.destroy();
    }
  });

  it("a non-admin cannot read or infer another user's keys", async () => {
    const missing = await send("GET", `${API}/ownedaccesskeys/no-such-key`, { token: bob });
    assert.equal(missing.status, 404);
    const attempts: [string, string, unknown, string?][] = [
      ["GET", "carol-main", undefined],
      ["PUT", "carol-main", { metadata: { name: "carol-main", resourceVersion: "1" }, spec: { bogus: 1 } }],
      ["PATCH", "carol-main", { spec: { disabled: true } }, MERGE],
      ["PATCH", "carol-main", [{ op: "test", path: "/spec/user", value: "carol" }], JSON_PATCH],
      ["DELETE", "carol-main", undefined],
    ];
    for (const [method, name, body, contentType] of attempts) {
      const reply = await send(method, `${API}/ownedaccesskeys/${name}`, { token: bob, body, contentType });
      assert.equal(reply.status, 404, `${method}: ${reply.body}`);
      assert.equal(reply.json().message, missing.json().message.replace("no-such-key", name), method);
    }
    const list = (await send("GET", `${API}/ownedaccesskeys?fieldSelector=spec.user%3Dcarol`, { token: bob })).json();
    assert.deepEqual(list.items, []);
    assert.equal((await send("GET", `${API}/users/carol/accesskeys`, { token: bob })).status, 403);
    assert.equal((await send("GET", `${API}/users/carol`, { token: bob })).status, 403);
    // Carol's key still works: nothing happened to it.
    assert.equal((await send("POST", `${API}/selves`, { token: carol, body: {} })).status, 201);
    // Viewers read every key, never the material; admins too.
    const all = await send("GET", `${API}/ownedaccesskeys`, {
      token: await client.createKey(admin, "vic-1", { user: "vic" }),
    });
    assert.ok(all.json().items.length >= 4);
    assert.equal(
      all.json().items.some((k: { spec: { key?: string } }) => k.spec.key),
      false,
    );
  });

  it("a non-admin cannot create keys for others or give its key more rights", async () => {
    const forCarol = await send("POST", `${API}/ownedaccesskeys`, {
      token: bob,
      body: { metadata: { name: "x1" }, spec: { user: "carol" } },
    });
    assert.equal(forCarol.status, 403);
    const groups = await send("POST", `${API}/ownedaccesskeys`, {
      token: bob,
      body: { metadata: { name: "x2" }, spec: { displayName: "x2", groups: ["admins"] } },
    });
    assert.equal(groups.status, 403);
    const hand = await send("PATCH", `${API}/ownedaccesskeys/bob-main`, {
      token: bob,
      body: { spec: { user: "admin" } },
      contentType: MERGE,
    });
    assert.equal(hand.status, 422);
    assert.match(hand.json().message, /spec.user: Forbidden: field is immutable/);
    const status = await send("PATCH", `${API}/ownedaccesskeys/bob-main/status`, {
      token: bob,
      body: { status: { lastActivity: null } },
      contentType: MERGE,
    });
    assert.equal(status.status, 403);
  });

  it("role escalation through PUT and PATCH is refused with a 403 naming the verb", async () => {
    const patch = await send("PATCH", `${API}/users/bob`, {
      token: bob,
      body: { spec: { clusterRoles: [{ name: "admin" }] } },
      contentType: MERGE,
    });
    assert.equal(patch.status, 403);
    assert.equal(
      patch.json().message,
      'users.management.platform.sh "bob" is forbidden: User "bob" cannot escalate resource "users" in API group "management.platform.sh" at the cluster scope: changing spec.clusterRoles needs it',
    );
    const user = (await send("GET", `${API}/users/bob`, { token: bob })).json();
    user.spec.groups = ["admins"];
    assert.equal((await send("PUT", `${API}/users/bob`, { token: bob, body: user })).status, 403);
    const json = [
      { op: "add", path: "/spec/tokenGeneration", value: 0 },
      { op: "add", path: "/spec/disabled", value: false },
    ];
    // Unchanged values are no change: a JSON patch writing the same settings passes.
    assert.equal(
      (await send("PATCH", `${API}/users/bob`, { token: bob, body: json, contentType: JSON_PATCH })).status,
      200,
    );
    const ok = await send("PATCH", `${API}/users/bob`, {
      token: bob,
      body: { spec: { displayName: "Robert" } },
      contentType: MERGE,
    });
    assert.equal(ok.status, 200);
    const team = await send("POST", `${API}/teams`, {
      token: bob,
      body: { metadata: { name: "bobs" }, spec: { users: ["bob"], clusterRoles: [{ name: "admin" }] } },
    });
    assert.equal(team.status, 403);
    assert.match(team.json().message, /cannot create resource "teams"/);
  });

  it("scope escalation through a key's own scope is refused", async () => {
    const scoped = await client.createKey(bob, "bob-cli", { scope: { roles: [{ role: "platformCLI" }] } });
    const widen = await send("PATCH", `${API}/ownedaccesskeys/bob-cli`, {
      token: scoped,
      body: { spec: { scope: null } },
      contentType: MERGE,
    });
    assert.equal(widen.status, 403);
    const another = await send("POST", `${API}/ownedaccesskeys`, {
      token: scoped,
      body: { metadata: { name: "free" }, spec: { displayName: "free" } },
    });
    assert.equal(another.status, 403);
    const password = await send("POST", `${API}/users/bob/password`, {
      token: scoped,
      body: { spec: { password: "whatever-123" } },
    });
    assert.equal(password.status, 403);
  });

  it("a platformCLI key can create only what the client needs", async () => {
    const cli = await client.createKey(admin, "admin-cli", { scope: { roles: [{ role: "platformCLI" }] } });
    assert.equal((await send("POST", `${API}/selves`, { token: cli, body: {} })).status, 201);
    assert.equal((await send("GET", "/apis", { token: cli })).status, 200);
    for (const [plural, body] of [
      ["users", { metadata: { name: "evil" } }],
      ["teams", { metadata: { name: "evil" } }],
      ["ownedaccesskeys", { metadata: { name: "evil" }, spec: { user: "admin" } }],
    ] as const) {
      const reply = await send("POST", `${API}/${plural}`, { token: cli, body });
      assert.equal(reply.status, 403, plural);
      assert.match(reply.json().message, /the access key's scope does not allow it/);
    }
    assert.equal((await send("DELETE", `${API}/users/bob`, { token: cli })).status, 403);
    assert.equal((await send("GET", `${API}/users`, { token: cli })).status, 403);
  });

  it("a virtualcluster-role key cannot list users, and a project key cannot reach another project", async () => {
    const vc = await client.createKey(admin, "admin-vc", {
      scope: { roles: [{ role: "virtualcluster", projects: ["*"] }] },
      type: "User",
    });
    const users = await send("GET", `${API}/users`, { token: vc });
    assert.equal(users.status, 403);
    assert.match(users.json().message, /cannot list resource "users".*scope does not allow it/);
    assert.equal((await send("POST", `${API}/selves`, { token: vc, body: {} })).status, 201);
    const project = await client.createKey(admin, "admin-project-a", { scope: { projects: [{ project: "a" }] } });
    const other = await send("GET", `${API}/namespaces/p-b/virtualclusterinstances/vc1`, { token: project });
    assert.equal(other.status, 403);
    // Inside its project the request passes authorization (the resource itself arrives with projects).
    assert.equal(
      (await send("GET", `${API}/namespaces/p-a/virtualclusterinstances/vc1`, { token: project })).status,
      404,
    );
  });

  it("selves describes the caller, and selfsubjectaccessreviews answer for it", async () => {
    const self = (await send("POST", `${API}/selves`, { token: bob, body: {} })).json();
    assert.equal(self.status.user.name, "bob");
    assert.equal(self.status.user.email, "bob@example.com");
    assert.equal(self.status.accessKey, "bob-main");
    assert.equal(self.status.accessKeyType, "User");
    assert.equal(self.status.projectNamespacePrefix, "p-");
    assert.match(self.status.platformHost, /^127\.0\.0\.1:\d+$/);
    const inspect = await send("POST", `${API}/selves`, { token: admin, body: { spec: { accessKey: carol } } });
    assert.equal(inspect.json().status.user.name, "carol");
    assert.equal(inspect.body.includes(carol), false);
    const unknown = await send("POST", `${API}/selves`, {
      token: admin,
      body: { spec: { accessKey: "no-such-key-0123456789" } },
    });
    assert.equal(unknown.status, 400);
    // Reviewing another credential is for admins, runtimes and agents; a role bob writes into a key of his own for a
    // cluster that does not exist, or a project he is not in, makes him neither.
    const probe = await send("POST", `${API}/selves`, { token: bob, body: { spec: { accessKey: carol } } });
    assert.equal(probe.status, 403);
    const roles = [
      { role: "agent", clusters: ["no-such-cluster"] },
      { role: "virtualcluster", projects: ["not-bobs"] },
    ];
    for (const [i, role] of roles.entries()) {
      const selfMade = await client.createKey(bob, `bob-probe-${i}`, { scope: { roles: [role] } });
      const reviewed = await send("POST", `${API}/selves`, { token: selfMade, body: { spec: { accessKey: carol } } });
      assert.equal(reviewed.status, 403, `${JSON.stringify(role)}: ${reviewed.body}`);
    }
    const review = (verb: string, resource: string, name?: string) =>
      send("POST", `${API}/selfsubjectaccessreviews`, {
        token: bob,
        body: { spec: { resourceAttributes: { verb, resource, name, group: "management.platform.sh" } } },
      });
    const yes = await review("get", "users", "bob");
    assert.equal(yes.status, 201);
    assert.equal(yes.json().status.allowed, true);
    assert.equal((await review("list", "users")).json().status.allowed, false);
    assert.equal((await review("escalate", "users", "bob")).json().status.allowed, false);
  });

  it("teams give their members roles and groups; a key's use is recorded in status.lastActivity", async () => {
    await client.createUser(admin, "tess");
    const tess = await client.createKey(admin, "tess-1", { user: "tess" });
    assert.equal((await send("GET", `${API}/users`, { token: tess })).status, 403);
    const team = await send("POST", `${API}/teams`, {
      token: admin,
      body: { metadata: { name: "auditors" }, spec: { users: ["tess"], clusterRoles: [{ name: "viewer" }] } },
    });
    assert.equal(team.status, 201);
    assert.equal((await send("GET", `${API}/users`, { token: tess })).status, 200);
    const self = (await send("POST", `${API}/selves`, { token: tess, body: {} })).json();
    assert.deepEqual(self.status.groups, ["auditors", "system:authenticated"]);
    assert.deepEqual(
      self.status.user.teams.map((t: { name: string }) => t.name),
      ["auditors"],
    );
    await client.createKey(admin, "auditors-ci", { team: "auditors" });
    const teamKeys = (await send("GET", `${API}/teams/auditors/accesskeys`, { token: admin })).json();
    assert.deepEqual(
      teamKeys.accessKeys.map((k: { metadata: { name: string } }) => k.metadata.name),
      ["auditors-ci"],
    );
    await eventually(
      async () =>
        Boolean((await send("GET", `${API}/ownedaccesskeys/tess-1`, { token: admin })).json().status?.lastActivity),
      "status.lastActivity of a used key",
    );
  });

  it("a ttl above the global maximum is reduced with a warning", async () => {
    setSettings((auth) => {
      auth.accessKeyMaxTTLSeconds = 3600;
    });
    try {
      const reply = await send("POST", `${API}/ownedaccesskeys`, {
        token: bob,
        body: { metadata: { name: "long" }, spec: { displayName: "long", ttl: 999999 } },
      });
      assert.equal(reply.status, 201);
      assert.equal(reply.json().spec.ttl, 3600);
      assert.match(
        String(reply.headers.warning),
        /reduced to the platform's maximum access key lifetime of 3600 seconds/,
      );
    } finally {
      setSettings((auth) => {
        auth.accessKeyMaxTTLSeconds = 0;
      });
    }
  });

  it("deprecated fields (parent, oidcLogin, scope.rules, scope.allowPlatformCli) are kept, with a Warning on each write", async () => {
    const spec = {
      parent: "older-key",
      oidcLogin: { lastRefresh: "2026-01-01T00:00:00Z" },
      scope: { rules: [{ verbs: ["get"] }], allowPlatformCli: true },
    };
    const created = await send("POST", `${API}/ownedaccesskeys`, {
      token: admin,
      body: {
        metadata: { name: "deprecated-fields" },
        spec: { user: "bob", displayName: "deprecated fields", ...spec },
      },
    });
    assert.equal(created.status, 201, created.body);
    const warnings = (reply: { headers: Record<string, unknown> }) => String(reply.headers.warning);
    for (const pattern of [
      /299 - "spec\.parent: deprecated/,
      /299 - "spec\.oidcLogin: deprecated: use spec\.identity/,
      /299 - "spec\.scope\.rules: deprecated: use spec\.scope\.projects/,
      /299 - "spec\.scope\.allowPlatformCli: deprecated: use the role \\"platformCLI\\"/,
    ]) {
      assert.match(warnings(created), pattern);
    }
    assert.equal(created.json().spec.parent, "older-key");
    const patched = await send("PATCH", `${API}/ownedaccesskeys/deprecated-fields`, {
      token: admin,
      body: { spec: { displayName: "still deprecated" } },
      contentType: MERGE,
    });
    assert.equal(patched.status, 200, patched.body);
    assert.match(warnings(patched), /spec\.scope\.allowPlatformCli: deprecated/);
    const plain = await send("POST", `${API}/ownedaccesskeys`, {
      token: admin,
      body: { metadata: { name: "current-fields" }, spec: { user: "bob", displayName: "current fields" } },
    });
    assert.equal(plain.headers.warning, undefined);
    const token = await send("POST", `${API}/directclusterendpointtokens`, {
      token: admin,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "DirectClusterEndpointToken",
        spec: { scope: { allowPlatformCli: true } },
      },
    });
    assert.equal(token.status, 201, token.body);
    assert.match(warnings(token), /spec\.scope\.allowPlatformCli: deprecated/);
  });

  it("password login issues a Login key; logout deletes it; a password change revokes logins but not CI keys", async () => {
    assert.equal((await client.setPassword(admin, "carol", "carol-password-1")).status, 201);
    const login = await client.login("carol", "carol-password-1");
    assert.equal(login.status, 200);
    const { user, username, accessKey } = login.json();
    assert.deepEqual([user, username], ["carol", "carol"]);
    const self = (await send("POST", `${API}/selves`, { token: accessKey, body: {} })).json();
    assert.equal(self.status.accessKeyType, "Login");
    assert.equal((await send("POST", "/auth/logout", { token: accessKey })).status, 200);
    assert.equal((await send("POST", `${API}/selves`, { token: accessKey, body: {} })).status, 401);

    const second = (await client.login("carol", "carol-password-1")).json().accessKey;
    const wrong = await client.setPassword(carol, "carol", "carol-password-2", "not-the-password");
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.includes("not-the-password"), false);
    assert.equal((await client.setPassword(carol, "carol", "carol-password-2")).status, 403, "current password needed");
    const changed = await client.setPassword(carol, "carol", "carol-password-2", "carol-password-1");
    assert.equal(changed.status, 201);
    assert.equal(changed.body.includes("carol-password"), false);
    const revoked = await send("POST", `${API}/selves`, { token: second, body: {} });
    assert.equal(revoked.status, 401);
    assert.match(revoked.json().message, /revoked/);
    assert.equal((await send("POST", `${API}/selves`, { token: carol, body: {} })).status, 201, "User keys stay");
    assert.equal((await client.login("carol", "carol-password-1")).status, 401);
    assert.equal((await client.login("carol", "carol-password-2")).status, 200);
  });

  it("failed logins are throttled per username with 429 and Retry-After", async () => {
    await client.createUser(admin, "dave");
    assert.equal((await client.setPassword(admin, "dave", "dave-password-1")).status, 201);
    for (let i = 0; i < 3; i++) {
      const reply = await client.login("dave", `guess-${i}`);
      assert.equal(reply.status, 401);
      assert.equal(reply.json().message, "Invalid username or password");
    }
    const throttled = await client.login("dave", "dave-password-1");
    assert.equal(throttled.status, 429);
    assert.ok(Number(throttled.headers["retry-after"]) >= 1);
    assert.equal(throttled.json().reason, "TooManyRequests");
    const unknown = await client.login("nobody-here", "whatever");
    assert.equal(unknown.status, 401);
    assert.equal(unknown.json().message, "Invalid username or password");
  });

  it("login refuses disabled users and is off when the settings disable password login", async () => {
    await client.createUser(admin, "erin");
    await client.setPassword(admin, "erin", "erin-password-1");
    await send("PATCH", `${API}/users/erin`, { token: admin, body: { spec: { disabled: true } }, contentType: MERGE });
    const disabled = await client.login("erin", "erin-password-1");
    assert.equal(disabled.status, 401);
    assert.equal(disabled.json().message, "user is disabled");
    setSettings((auth) => {
      auth.passwordLoginDisabled = true;
      auth.customHttpHeaders = { "x-auth-endpoint": "yes" };
    });
    try {
      const off = await client.login("carol", "carol-password-2");
      assert.equal(off.status, 403);
      assert.equal(off.json().message, "password login is disabled");
      assert.equal(off.headers["x-auth-endpoint"], "yes");
    } finally {
      setSettings((auth) => {
        auth.passwordLoginDisabled = false;
        auth.customHttpHeaders = {};
      });
    }
    const malformed = await client.send("POST", "/auth/password/login", {
      body: '{"username":"carol","password":secret-ish}',
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.includes("secret-ish"), false);
  });
});
