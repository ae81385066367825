// The audit datastore of the real platform over HTTPS, embedded and on a real PostgreSQL: every audited request is
// searchable through `auditevents` by each field selector, newest first, in stable pages while requests keep
// coming; `get` by audit ID; a Table for kubectl; admins only; credentials redacted as in the file.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { POSTGRES_MISSING, startTestPostgres, type TestPostgres } from "../src/audit/datastore/testing-postgres.ts";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import { AuthClient } from "./support/auth-client.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";

const API = "/apis/management.platform.sh/v1";

// biome-ignore lint/suspicious/noExplicitAny: assertions navigate the objects freely
type Json = Record<string, any>;

function describeDatastore(name: string, endpoint: () => Promise<{ url: string; stop(): Promise<void> } | string>) {
  describe(`audit datastore (${name}) over HTTPS`, () => {
    let dataDir: string;
    let platform: RunningPlatform;
    let client: AuthClient;
    let admin: string;
    let alice: string;
    let database: { url: string; stop(): Promise<void> } | undefined;
    let skipped: string | undefined;
    const started = Date.now();

    const list = async (query: string, token = admin): Promise<Json> => {
      const reply = await client.send("GET", `${API}/auditevents?${query}`, { token });
      assert.equal(reply.status, 200, reply.body);
      return reply.json();
    };
    const ids = (listed: Json) => listed.items.map((item: Json) => item.metadata.name);
    /** Waits until the event of a reply (its Audit-Id) is searchable. */
    const stored = (auditId: string) =>
      eventually(
        async () => (await list(`fieldSelector=metadata.name=${auditId}`)).items.length > 0,
        `event ${auditId}`,
      );

    before(async () => {
      const target = await endpoint();
      if (target === "") {
        skipped = POSTGRES_MISSING;
        return;
      }
      database = typeof target === "string" ? undefined : target;
      dataDir = await mkdtemp(join(tmpdir(), "vcp-audit-store-"));
      platform = await startPlatform({
        dataDir,
        host: "127.0.0.1",
        port: 0,
        auth: { scrypt: { N: 1024, r: 8, p: 1 } },
      });
      client = new AuthClient(platform.url, await readFile(join(dataDir, "pki", "ca.crt"), "utf8"));
      admin = platform.createdAdminKey!;
      const storeLine = database ? `  dataStoreEndpoint: ${database.url}\n` : "";
      const config = await client.send("PATCH", `${API}/configs/platform-config`, {
        token: admin,
        contentType: "application/merge-patch+json",
        body: {
          spec: { raw: `audit:\n  enabled: true\n  level: 1\n  path: audit.log\n${storeLine}` },
        },
      });
      assert.equal(config.status, 200, config.body);
      await client.createUser(admin, "alice");
      alice = await client.createKey(admin, "alice-key", { user: "alice", type: "User" });
    });
    after(async () => {
      client?.close();
      await platform?.close();
      await database?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    const test = (title: string, body: () => Promise<void>) =>
      it(title, async (t) => {
        if (skipped) {
          t.diagnostic(skipped);
          t.skip(skipped);
          return;
        }
        await body();
      });

    test("every audited request is searchable by user, verb, resource, name, code and stage", async () => {
      await client.createUser(admin, "doomed");
      const refused = await client.send("DELETE", `${API}/users/doomed`, { token: alice });
      assert.equal(refused.status, 403);
      const deleted = await client.send("DELETE", `${API}/users/doomed`, { token: admin });
      assert.equal(deleted.status, 200, deleted.body);
      const missing = await client.send("GET", `${API}/teams/nowhere`, { token: alice });
      assert.equal(missing.status, 403);
      await stored(String(deleted.headers["audit-id"]));
      await stored(String(missing.headers["audit-id"]));

      const aliceDeletes = await list("fieldSelector=user.username=alice,verb=delete");
      assert.deepEqual(
        aliceDeletes.items.map((item: Json) => `${item.event.stage} ${item.event.responseStatus?.code ?? "-"}`),
        ["ResponseComplete 403", "RequestReceived -"],
        "both stages of alice's refused delete, newest first",
      );
      assert.equal(aliceDeletes.items[0].metadata.name, refused.headers["audit-id"]);
      const byCode = await list("fieldSelector=responseStatus.code=403,user.username=alice");
      assert.deepEqual(ids(byCode).sort(), [refused.headers["audit-id"], missing.headers["audit-id"]].sort());
      const byObject = await list(
        "fieldSelector=objectRef.resource=users,objectRef.name=doomed,verb=delete,stage=ResponseComplete",
      );
      assert.deepEqual(
        byObject.items.map((item: Json) => item.event.user.username),
        ["admin", "alice"],
      );
      const notAdmin = await list("fieldSelector=user.username!=admin,stage=ResponseComplete");
      assert.ok(
        notAdmin.items.length >= 2 && notAdmin.items.every((item: Json) => item.event.user.username !== "admin"),
      );
      const times = (await list("limit=50")).items.map((item: Json) => Date.parse(item.event.stageTimestamp));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => b - a),
        "newest first",
      );
    });

    test("since and until bound the time range", async () => {
      const before = await list(`fieldSelector=until=${new Date(started - 60_000).toISOString()}`);
      assert.equal(before.items.length, 0);
      const recent = await list("fieldSelector=since=1h,user.username=alice");
      assert.ok(recent.items.length >= 2);
      const future = await list(`fieldSelector=since=${new Date(Date.now() + 3_600_000).toISOString()}`);
      assert.equal(future.items.length, 0);
    });

    test("get answers the last stored stage of a request by its audit ID", async () => {
      const reply = await client.send("GET", `${API}/users/alice`, { token: admin });
      const auditId = String(reply.headers["audit-id"]);
      await eventually(
        async () => (await list(`fieldSelector=metadata.name=${auditId}`)).items.length === 2,
        "both stages",
      );
      const event = await client.send("GET", `${API}/auditevents/${auditId}`, { token: admin });
      assert.equal(event.status, 200, event.body);
      const object = event.json();
      assert.equal(object.kind, "AuditEvent");
      assert.equal(object.event.stage, "ResponseComplete");
      assert.equal(object.event.objectRef.name, "alice");
      assert.equal(object.instance, undefined, "the platform's own events carry no instance");
      const none = await client.send("GET", `${API}/auditevents/no-such-id`, { token: admin });
      assert.equal(none.status, 404);
      assert.equal(none.json().reason, "NotFound");
    });

    test("pages of limit/continue stay stable while requests keep being audited", async () => {
      for (let i = 0; i < 12; i++) await client.send("GET", `${API}/users/alice`, { token: alice });
      await eventually(
        async () => (await list("fieldSelector=user.username=alice,verb=get")).items.length >= 24,
        "events",
      );
      const expected = ids(await list("fieldSelector=user.username=alice"));
      const seen: string[] = [];
      let token = "";
      for (;;) {
        const page = await list(`fieldSelector=user.username=alice&limit=5${token ? `&continue=${token}` : ""}`);
        assert.ok(page.items.length <= 5);
        seen.push(...ids(page));
        // Alice keeps working while the pages are read: her new events are not part of this listing.
        await client.send("GET", `${API}/users/alice`, { token: alice });
        token = page.metadata.continue ?? "";
        if (!token) break;
      }
      assert.deepEqual(seen, expected);
    });

    test("only admins read audit events; bad selectors and tokens are 400s that say what is accepted", async () => {
      const denied = await client.send("GET", `${API}/auditevents`, { token: alice });
      assert.equal(denied.status, 403);
      const unknown = await client.send("GET", `${API}/auditevents?fieldSelector=spec.color=red`, { token: admin });
      assert.equal(unknown.status, 400);
      assert.match(unknown.json().message, /field label not supported: spec.color .*user\.username/);
      const badTime = await client.send("GET", `${API}/auditevents?fieldSelector=since=yesterday`, { token: admin });
      assert.equal(badTime.status, 400);
      assert.match(badTime.json().message, /RFC 3339/);
      const badCode = await client.send("GET", `${API}/auditevents?fieldSelector=responseStatus.code=ok`, {
        token: admin,
      });
      assert.equal(badCode.status, 400);
      const badContinue = await client.send("GET", `${API}/auditevents?continue=garbage`, { token: admin });
      assert.equal(badContinue.status, 400);
      const write = await client.send("DELETE", `${API}/auditevents/x`, { token: admin });
      assert.equal(write.status, 405);
    });

    test("access keys never reach the datastore", async () => {
      const created = await client.send("POST", `${API}/ownedaccesskeys`, {
        token: admin,
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "OwnedAccessKey",
          metadata: { name: "k2" },
          spec: { user: "admin", type: "User", displayName: "k2" },
        },
      });
      assert.equal(created.status, 201);
      await stored(String(created.headers["audit-id"]));
      const everything = JSON.stringify(await list("limit=5000"));
      assert.ok(!everything.includes(created.json().spec.key), "the new key is not in any event");
      assert.ok(!everything.includes(alice), "alice's key is not in any event");
      assert.ok(!everything.includes(admin), "the admin key is not in any event");
    });

    it("kubectl get auditevents --field-selector prints a table of the matching events", {
      skip: kubectlSkip,
    }, async (t) => {
      if (skipped) {
        t.skip(skipped);
        return;
      }
      const kubectl = new Kubectl(join(dataDir, "admin.kubeconfig"));
      const out = await kubectl.ok([
        "get",
        "auditevents",
        "--field-selector",
        "user.username=alice,verb=delete,stage=ResponseComplete",
      ]);
      const [header, ...rows] = out.trim().split("\n");
      assert.match(header, /^NAME\s+USER\s+VERB\s+RESOURCE\s+NAMESPACE\s+OBJECT\s+CODE\s+STAGE\s+AGE$/);
      assert.equal(rows.length, 1, out);
      assert.match(rows[0], /\balice\s+delete\s+users\s+doomed\s+403\s+ResponseComplete\b/);
    });
  });
}

describeDatastore("embedded", async () => "embedded");
describeDatastore("PostgreSQL", async () => {
  const server: TestPostgres | undefined = await startTestPostgres();
  return server ? { url: server.connectionString, stop: () => server.stop() } : "";
});
