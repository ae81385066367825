// Nesting depth over real HTTPS (issue 15 item 6): a body nested exactly MAX_NESTING_DEPTH levels is stored and read
// back; JSON, YAML, merge patch, JSON patch and apply bodies one level deeper, and 50,000 levels deep, get 400 with
// a message naming the bound, store nothing, and the audit log holds their ResponseComplete with 400. A write whose
// audit event cannot be built is refused with 500 before anything is stored, and a minimal event stands in for it:
// no input reaches that once bodies are bounded, so the platform's test-only fault seam makes the event fail.
// Strategic merge patch, which only built-in kinds take, is checked on the cluster API server.

import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureAdminToken } from "../src/cluster-apiserver/admin-token.ts";
import { startClusterApiServer } from "../src/cluster-apiserver/cluster-api-server.ts";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import { MAX_NESTING_DEPTH } from "../src/utils/max-nesting-depth.ts";
import { API, AuthClient, type Reply } from "./support/auth-client.ts";
import { eventually } from "./support/kubectl.ts";

/** A label that makes the test-only fault seam fail the audit event of the request carrying it. */
const FAULT = "fail-this-audit-event";
const TOO_DEEP = /is nested too deeply( .*)?: objects and lists may nest at most 100 levels$/;

/** JSON text of `levels` nested objects: {"a":{"a":...{}}}. */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
/** A User body whose status makes the whole body `levels` deep (the body's top level is 1). */
const userJson = (name: string, levels: number) =>
  `{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"${name}"},"status":${nestedJson(levels - 1)}}`;
const statusPatch = (levels: number) => `{"status":${nestedJson(levels - 1)}}`;
/** The same in YAML: block style, every level a line indented one more (flow style when that would be huge). */
const userYaml = (name: string, levels: number) => {
  const lines = [`apiVersion: management.platform.sh/v1`, "kind: User", `metadata: {name: ${name}}`];
  if (levels > 1000) return `${lines.join("\n")}\nstatus: ${"{a: ".repeat(levels - 2)}{}${"}".repeat(levels - 2)}\n`;
  lines.push("status:");
  for (let i = 1; i < levels - 1; i++) lines.push(`${" ".repeat(i)}a:`);
  return `${lines.join("\n")} {}\n`;
};

// biome-ignore lint/suspicious/noExplicitAny: assertions navigate the event JSON freely
type AuditEvent = Record<string, any>;

describe("nesting depth over HTTPS", () => {
  let dataDir: string;
  let auditLog: string;
  let platform: RunningPlatform;
  let client: AuthClient;
  let admin: string;
  let bob: string;

  const bobVersion = async () => (await client.send("GET", `${API}/users/bob`, { token: admin })).json().metadata;
  const events = async (): Promise<AuditEvent[]> => {
    const text = await readFile(auditLog, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  };
  /** The ResponseComplete event of a reply, once it is on disk. */
  const completion = async (reply: Reply): Promise<AuditEvent> => {
    const id = reply.headers["audit-id"];
    assert.ok(id, `the reply has an Audit-Id: ${reply.status} ${reply.body}`);
    const find = async () => (await events()).find((e) => e.auditID === id && e.stage === "ResponseComplete");
    await eventually(async () => (await find()) !== undefined, `the ResponseComplete event of ${id}`);
    return (await find())!;
  };
  const assertRefused = async (reply: Reply, what: string) => {
    assert.equal(reply.status, 400, `${what}: ${reply.body}`);
    const status = reply.json();
    assert.equal(status.kind, "Status", what);
    assert.equal(status.reason, "BadRequest", what);
    assert.match(status.message, TOO_DEEP, what);
    const event = await completion(reply);
    assert.equal(event.responseStatus.code, 400, what);
    assert.equal(event.user.username, "bob", what);
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-nesting-"));
    await mkdir(join(dataDir, "audit"), { mode: 0o700 });
    auditLog = join(dataDir, "audit", "audit.log");
    const configFile = join(dataDir, "platform.yaml");
    await writeFile(configFile, `audit:\n  enabled: true\n  path: ${auditLog}\n  level: 3\n`, { mode: 0o600 });
    platform = await startPlatform({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      configFile,
      testOnlyAuditFault: (request) => {
        let text = "";
        try {
          text = JSON.stringify(request.requestObject?.() ?? null);
        } catch {
          return; // a body that does not decode is answered 400 by the registry
        }
        if (text.includes(FAULT)) throw new Error("injected fault");
      },
    });
    client = new AuthClient(platform.url, await readFile(join(dataDir, "pki", "ca.crt"), "utf8"));
    admin = (await readFile(join(dataDir, "admin-access-key"), "utf8")).trim();
    await client.createUser(admin, "bob");
    bob = await client.createKey(admin, "bob-key", { user: "bob" });
  });
  after(async () => {
    client?.close();
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("a body nested exactly MAX_NESTING_DEPTH levels is stored, read back as JSON and YAML, and audited", async () => {
    assert.equal(MAX_NESTING_DEPTH, 100);
    const patched = await client.send("PATCH", `${API}/users/bob`, {
      token: bob,
      body: statusPatch(100),
      contentType: "application/merge-patch+json",
    });
    assert.equal(patched.status, 200, patched.body);
    let status = patched.json().status;
    for (let i = 2; i < 100; i++) status = status.a;
    assert.deepEqual(status, {});
    const json = await client.send("GET", `${API}/users/bob`, { token: bob });
    assert.equal(json.status, 200);
    const yaml = await client.send("GET", `${API}/users/bob`, { token: bob, accept: "application/yaml" });
    assert.equal(yaml.status, 200);
    assert.match(yaml.body, /^status:\n {2}a:\n {4}a:\n/m);
    assert.ok((await completion(patched)).requestObject.status.a, "the event holds the request object");
    // Sent back without managedFields: they nest a few levels deeper than the object, and the bound counts them.
    const current = json.json();
    delete current.metadata.managedFields;
    current.status = JSON.parse(nestedJson(99));
    const replaced = await client.send("PUT", `${API}/users/bob`, { token: bob, body: current });
    assert.equal(replaced.status, 200, replaced.body);
  });

  it("JSON, YAML, merge patch, JSON patch and apply bodies one level deeper, or 50,000, get 400 and store nothing", async () => {
    const before = await bobVersion();
    const deepPatch = (levels: number) => `[{"op":"replace","path":"/status","value":${nestedJson(levels - 2)}}]`;
    for (const levels of [101, 50_000]) {
      const cases: [string, string, string, string][] = [
        ["JSON update", "PUT", userJson("bob", levels), "application/json"],
        ["YAML update", "PUT", userYaml("bob", levels), "application/yaml"],
        ["merge patch", "PATCH", statusPatch(levels), "application/merge-patch+json"],
        ["JSON patch", "PATCH", deepPatch(levels), "application/json-patch+json"],
        ["apply (JSON)", "PATCH", userJson("bob", levels), "application/apply-patch+yaml"],
        ["apply (YAML)", "PATCH", userYaml("bob", levels), "application/apply-patch+yaml"],
      ];
      for (const [what, method, body, contentType] of cases) {
        const path = method === "PATCH" && contentType.startsWith("application/apply") ? "?fieldManager=test" : "";
        const reply = await client.send(method, `${API}/users/bob${path}`, { token: bob, body, contentType });
        await assertRefused(reply, `${what}, ${levels} levels`);
      }
    }
    const after = await bobVersion();
    assert.equal(after.resourceVersion, before.resourceVersion, "nothing was stored");
  });

  it("a JSON patch that copies a branch into itself past the bound gets 400, one copying past 3 MiB 422; nothing stored", async () => {
    const before = await bobVersion();
    const reply = await client.send("PATCH", `${API}/users/bob`, {
      token: bob,
      body: `[{"op":"copy","from":"/status","path":"/status${"/a".repeat(60)}/b"}]`,
      contentType: "application/json-patch+json",
    });
    await assertRefused(reply, "a doubling copy");
    assert.match(reply.json().message, /^the object after JSON patch operation 0 \(copy/);
    // Within the bound, copies into a sibling double the object each time: they stop at 3 MiB copied.
    const doubling: object[] = [{ op: "replace", path: "/status", value: { x: "x".repeat(1000) } }];
    for (let i = 0; i < 40; i++) doubling.push({ op: "copy", from: "/status", path: `/status/c${i}` });
    const grown = await client.send("PATCH", `${API}/users/bob`, {
      token: bob,
      body: doubling,
      contentType: "application/json-patch+json",
    });
    assert.equal(grown.status, 422, grown.body);
    assert.match(grown.json().message, /the copies of this patch add more than 3145728 bytes/);
    assert.equal((await bobVersion()).resourceVersion, before.resourceVersion);
  });

  it("a write whose audit event cannot be built is refused with 500 before anything is stored, with a minimal event", async () => {
    const before = await bobVersion();
    const patch = await client.send("PATCH", `${API}/users/bob`, {
      token: bob,
      body: { metadata: { labels: { marker: FAULT } } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(patch.status, 500, patch.body);
    assert.equal(patch.json().reason, "InternalError");
    assert.match(patch.json().message, /the audit event of this request could not be built, so nothing was done/);
    const after = await bobVersion();
    assert.equal(after.resourceVersion, before.resourceVersion, "nothing was stored");
    assert.equal(after.labels?.marker, undefined);
    // The stand-in event: who did what to which object, and the code; no request object.
    const { level, verb, user, objectRef, responseStatus, annotations, requestObject } = await completion(patch);
    assert.deepEqual(
      { level, verb, user: user.username, objectRef, responseStatus, requestObject },
      {
        level: "Metadata",
        verb: "patch",
        user: "bob",
        objectRef: { resource: "users", name: "bob", apiGroup: "management.platform.sh", apiVersion: "v1" },
        responseStatus: { metadata: {}, code: 500 },
        requestObject: undefined,
      },
    );
    assert.ok(annotations["audit.platform.sh/event-incomplete"]);

    const create = await client.send("POST", `${API}/users`, {
      token: admin,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "User",
        metadata: { name: "carol", labels: { marker: FAULT } },
      },
    });
    assert.equal(create.status, 500, create.body);
    assert.equal((await client.send("GET", `${API}/users/carol`, { token: admin })).status, 404);
    assert.equal((await completion(create)).responseStatus.code, 500);
  });
});

describe("nesting depth of strategic merge patches (cluster API server)", () => {
  it("a strategic merge patch nested one level past the bound, or 50,000, gets 400 and changes nothing", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "vc-nesting-"));
    const server = await startClusterApiServer({ dataDir, port: 0 });
    const client = new AuthClient(server.url, server.caPem);
    try {
      const token = await ensureAdminToken(dataDir);
      const path = "/api/v1/namespaces/default/configmaps";
      const created = await client.send("POST", path, {
        token,
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings" }, data: { mode: "fast" } },
      });
      assert.equal(created.status, 201, created.body);
      // The patch's top level is 1 and metadata.annotations adds two: the rest makes it `levels` deep.
      const patch = (levels: number) => `{"metadata":{"annotations":${nestedJson(levels - 2)}}}`;
      const fits = await client.send("PATCH", `${path}/settings`, {
        token,
        body: patch(100),
        contentType: "application/strategic-merge-patch+json",
      });
      assert.equal(fits.status, 422, "within the bound the patch is decoded (and annotations must be strings)");
      for (const levels of [101, 50_000]) {
        const reply = await client.send("PATCH", `${path}/settings`, {
          token,
          body: patch(levels),
          contentType: "application/strategic-merge-patch+json",
        });
        assert.equal(reply.status, 400, reply.body);
        assert.match(reply.json().message, TOO_DEEP);
      }
      const after = await client.send("GET", `${path}/settings`, { token });
      assert.equal(after.json().metadata.resourceVersion, created.json().metadata.resourceVersion);
    } finally {
      client.close();
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
