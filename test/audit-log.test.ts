// The audit log of the real platform over HTTPS: Kubernetes Event lines by policy, credentials redacted, rotation
// with compression under load without losing a line, a failing disk that never blocks a request, and no event lost
// when the platform stops.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { capture, send } from "./support/https-json.ts";
import { eventually } from "./support/kubectl.ts";
import { type PlatformProcess, refusedStart, startPlatformProcess } from "./support/platform-process.ts";

const API = "/apis/management.platform.sh/v1";
const LOAD_REQUESTS = 3000;
const LOAD_CONCURRENCY = 32;

const auditConfig = (path: string) => `audit:
  enabled: true
  path: ${path}
  maxSize: 1
  compress: true
  policy:
    omitStages: [RequestReceived]
    rules:
    - level: None
      nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
    - level: RequestResponse
      resources: [{group: management.platform.sh}]
    - level: Metadata
`;

/** Every event in the live file and the backups. Compression runs meanwhile: a file that is being replaced by
 * its .gz is read once, and a file that vanished mid-read restarts the read. */
// biome-ignore lint/suspicious/noExplicitAny: assertions navigate the event JSON freely
type AuditEvent = Record<string, any>;

async function auditEvents(dir: string): Promise<AuditEvent[]> {
  for (;;) {
    const names = await readdir(dir).catch(() => [] as string[]); // created with the first event
    const events: AuditEvent[] = [];
    try {
      for (const name of names) {
        // Skipped: the record of the backups the log made (.audit.log.backups), and files being compressed.
        if (name.startsWith(".") || name.endsWith(".tmp") || names.includes(`${name}.gz`)) continue;
        const bytes = await readFile(join(dir, name));
        const text = name.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
        // The live file may end in a line being appended right now: only complete lines count.
        const complete = name.endsWith(".gz") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
        for (const line of complete.split("\n")) if (line) events.push(JSON.parse(line));
      }
      return events;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}

/** GETs `path` `total` times over `concurrency` keep-alive connections; resolves with the number of 200s. */
async function load(platform: PlatformProcess, path: string, total: number, concurrency: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, ca: platform.caPem });
  let started = 0;
  let ok = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        `${platform.url}${path}`,
        { agent, headers: { authorization: `Bearer ${platform.adminKey}` } },
        (res) => {
          if (res.statusCode === 200) ok++;
          res.resume();
          res.on("end", resolve);
        },
      );
      req.on("error", reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        await one();
      }
    }),
  );
  agent.destroy();
  return ok;
}

describe("audit log", () => {
  let dir: string;
  let auditDir: string;
  let configFile: string;
  let platform: PlatformProcess;
  let logs: () => string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vcp-audit-"));
    auditDir = join(dir, "audit");
    configFile = join(dir, "platform.yaml");
    await writeFile(configFile, auditConfig(join(auditDir, "audit.log")));
    platform = await startPlatformProcess({ extraArgs: ["--config", configFile, "--audit-dir", dir] });
    logs = capture(platform.child.stderr);
  });
  after(async () => {
    await platform?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("each request is an audit.k8s.io/v1 Event with the policy's level, request and response objects", async () => {
    const reply = await send(platform, "GET", `${API}/users/admin`, { token: platform.adminKey });
    const auditId = reply.headers["audit-id"];
    assert.ok(auditId);
    await eventually(async () => (await auditEvents(auditDir)).some((e) => e.auditID === auditId), "the event");
    const event = (await auditEvents(auditDir)).find((e) => e.auditID === auditId)!;
    assert.equal(event.kind, "Event");
    assert.equal(event.apiVersion, "audit.k8s.io/v1");
    assert.equal(event.level, "RequestResponse");
    assert.equal(event.stage, "ResponseComplete");
    assert.equal(event.verb, "get");
    assert.equal(event.requestURI, `${API}/users/admin`);
    assert.equal(event.user.username, "admin");
    assert.deepEqual(event.objectRef, {
      resource: "users",
      name: "admin",
      apiGroup: "management.platform.sh",
      apiVersion: "v1",
    });
    assert.deepEqual(event.responseStatus, { metadata: {}, code: 200 });
    assert.equal(event.responseObject.kind, "User");
    assert.match(event.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(event.sourceIPs.length === 1 && event.userAgent === undefined);
  });

  it("access keys, config secrets and passwords never reach the audit log", async () => {
    const created = await send(platform, "POST", `${API}/ownedaccesskeys`, {
      token: platform.adminKey,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: "audited" },
        spec: { user: "admin", type: "User", displayName: "audited" },
      },
    });
    assert.equal(created.status, 201, created.body);
    const key = created.json().spec.key as string;
    assert.ok(key.length >= 32);
    await send(platform, "POST", "/auth/password/login", {
      body: { username: "admin", password: "wrong-password-123" },
    });
    const configWrite = await send(platform, "PATCH", `${API}/configs/platform-config`, {
      token: platform.adminKey,
      body: {
        spec: {
          raw: `${auditConfig(join(auditDir, "audit.log"))}secretStore:\n  auth: {token: vault-t0ken-in-audit}\n`,
        },
      },
      contentType: "application/merge-patch+json",
    });
    assert.equal(configWrite.status, 200, configWrite.body);
    await eventually(
      async () => (await auditEvents(auditDir)).some((e) => e.auditID === configWrite.headers["audit-id"]),
      "the config write event",
    );
    const auditId = created.headers["audit-id"];
    await eventually(async () => (await auditEvents(auditDir)).some((e) => e.auditID === auditId), "the create event");
    const text = JSON.stringify(await auditEvents(auditDir));
    assert.ok(!text.includes(key), "the access key is not logged");
    assert.ok(!text.includes("wrong-password-123"), "the password is not logged");
    assert.ok(!text.includes("vault-t0ken-in-audit"), "config secrets are not logged");
    const write = (await auditEvents(auditDir)).find((e) => e.auditID === configWrite.headers["audit-id"])!;
    assert.match(write.requestObject.spec.raw, /token: <redacted>/);
    assert.equal(write.responseObject.status.secretStore.auth.token, "<redacted>");
    const event = (await auditEvents(auditDir)).find((e) => e.auditID === auditId)!;
    assert.equal(event.level, "Metadata", "access key creation is logged at Metadata at most");
  });

  it("a refused config never leaks its secrets: a secret of the wrong type, or one copied by a YAML alias", async () => {
    const attempts = [
      `${auditConfig(join(auditDir, "audit.log"))}auth:\n  oidc: {clientId: a, clientSecret: {nested: Wr0ng-typed-s3cret}}\n`,
      `${auditConfig(join(auditDir, "audit.log"))}auth:\n  oidc:\n    clientSecret: &x Al1ased-s3cret\n    clientId: *x\n`,
    ];
    const ids: string[] = [];
    for (const raw of attempts) {
      const reply = await send(platform, "PATCH", `${API}/configs/platform-config`, {
        token: platform.adminKey,
        body: { spec: { raw } },
        contentType: "application/merge-patch+json",
      });
      assert.equal(reply.status, 422, reply.body);
      assert.doesNotMatch(reply.body, /Wr0ng-typed-s3cret|Al1ased-s3cret/);
      ids.push(String(reply.headers["audit-id"]));
    }
    const stored = await send(platform, "GET", `${API}/configs/platform-config`, { token: platform.adminKey });
    assert.doesNotMatch(stored.body, /Wr0ng-typed|Al1ased/, "nothing of the refused writes was stored");
    await eventually(async () => {
      const events = await auditEvents(auditDir);
      return ids.every((id) => events.some((e) => e.auditID === id && e.stage === "ResponseComplete"));
    }, "the refused writes' events");
    const text = JSON.stringify(await auditEvents(auditDir));
    assert.ok(!text.includes("Wr0ng-typed-s3cret"), "a secret of the wrong type is logged");
    assert.ok(!text.includes("Al1ased-s3cret"), "an aliased secret is logged");
  });

  it("rotation under load loses no line: every request is counted across rotated and compressed files", async () => {
    const before = (await auditEvents(auditDir)).filter(
      (e) => e.objectRef?.resource === "users" && e.verb === "list",
    ).length;
    const ok = await load(platform, `${API}/users`, LOAD_REQUESTS, LOAD_CONCURRENCY);
    assert.equal(ok, LOAD_REQUESTS);
    const count = async () =>
      (await auditEvents(auditDir)).filter((e) => e.objectRef?.resource === "users" && e.verb === "list").length;
    await eventually(async () => (await count()) === before + LOAD_REQUESTS, `${LOAD_REQUESTS} list events`);
    await eventually(async () => {
      const names = await readdir(auditDir);
      return names.filter((n) => n !== "audit.log" && !n.startsWith(".")).every((n) => n.endsWith(".log.gz"));
    }, "every rotated file compressed");
    const names = await readdir(auditDir);
    const backups = names.filter((n) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}(-\d+)?\.log\.gz$/.test(n));
    assert.ok(backups.length >= 2, `expected rotations, got ${names.join(", ")}`);
    assert.equal(await count(), before + LOAD_REQUESTS, "no duplicates either");
  });

  it("a failing audit file never blocks requests and is reported in the log and the metrics", async () => {
    const blocked = join(dir, "blocked");
    await writeFile(blocked, "a file where the audit directory should be");
    await writeFile(configFile, auditConfig(join(blocked, "audit.log")));
    await eventually(async () => {
      await send(platform, "GET", `${API}/users/admin`, { token: platform.adminKey });
      return logs().includes("audit log file failing");
    }, "the failure in the log");
    for (let i = 0; i < 20; i++) {
      assert.equal((await send(platform, "GET", `${API}/users/admin`, { token: platform.adminKey })).status, 200);
    }
    const metrics = await send(platform, "GET", "/metrics", { token: platform.adminKey });
    assert.match(metrics.body, /platform_audit_sink_failures_total\{operation="open"\} [1-9]/);
    assert.match(metrics.body, /apiserver_audit_event_total [1-9]/);
  });
});

describe("audit log at shutdown", () => {
  let dir: string | undefined;
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a platform stopped right after a burst of requests has every event in its file and its datastore", async () => {
    dir = await mkdtemp(join(tmpdir(), "vcp-audit-stop-"));
    const dataDir = join(dir, "data");
    const configFile = join(dir, "platform.yaml");
    await writeFile(configFile, `audit: {enabled: true, level: 1, path: ${join(dir, "audit", "audit.log")}}\n`);
    const platform = await startPlatformProcess({
      dataDir,
      extraArgs: ["--config", configFile, "--audit-dir", join(dir, "audit")],
    });
    try {
      assert.equal(await load(platform, `${API}/users`, 2000, LOAD_CONCURRENCY), 2000);
    } finally {
      await platform.stop(); // SIGTERM as the last answers arrive: events still batched must reach both
    }
    const listed = (await auditEvents(join(dir, "audit"))).filter(
      (e) => e.objectRef?.resource === "users" && e.verb === "list",
    );
    assert.equal(listed.length, 4000, "both stages of every request in the file");
    const db = new DatabaseSync(join(dataDir, "audit-events.db"), { readOnly: true });
    try {
      const row = db
        .prepare("SELECT count(*) AS n FROM audit_events WHERE resource = 'users' AND verb = 'list'")
        .get() as { n: number };
      assert.equal(row.n, 4000, "and in the datastore");
    } finally {
      db.close();
    }
  });
});

describe("the audit directory", () => {
  let dir: string | undefined;
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("platform start refuses an --audit-dir that overlaps its keys or store, in one line, before writing anything", async () => {
    dir = await mkdtemp(join(tmpdir(), "vcp-audit-dir-"));
    const dataDir = join(dir, "data");
    for (const auditDir of [dataDir, join(dataDir, "pki"), dir]) {
      const refused = await refusedStart({ dataDir, extraArgs: ["--audit-dir", auditDir] });
      assert.match(refused, new RegExp(`^error: --audit-dir ${auditDir} overlaps ${dataDir}/(pki|platform\\.db)`));
      // Nothing of the platform's was written (a test run on etcd puts a key file in pki/ beforehand).
      const written = ["platform.db", "admin-access-key", "audit", join("pki", "ca.key")];
      assert.deepEqual(
        written.filter((name) => existsSync(join(dataDir, name))),
        [],
        "nothing written",
      );
    }
  });
});
