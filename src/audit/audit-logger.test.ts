import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Registry } from "prom-client";
import { defaultSettings, LiveSettings } from "../config/settings.ts";
import { auditSettingsOf } from "../config/to-settings.ts";
import type { AuditConfig } from "../config/types.ts";
import { AuditLogger } from "./audit-logger.ts";
import { BATCH_BYTES } from "./audit-pipe.ts";
import type { AuditCompletion } from "./types.ts";

const request = (verb: string, resource: string, extra: Partial<AuditCompletion> = {}): AuditCompletion => ({
  id: `id-${verb}-${resource}`,
  method: "GET",
  requestUri: `/apis/management.platform.sh/v1/${resource}`,
  requestInfo: {
    resourceRequest: true,
    verb,
    path: `/apis/management.platform.sh/v1/${resource}`,
    group: "management.platform.sh",
    version: "v1",
    namespace: "",
    resource,
    name: "",
    subresource: "",
  },
  user: { name: "admin", groups: ["system:authenticated"] },
  receivedAt: new Date(),
  code: 200,
  ...extra,
});

// biome-ignore lint/suspicious/noExplicitAny: assertions navigate the event JSON freely
async function lines(path: string): Promise<Record<string, any>[]> {
  try {
    return (await readFile(path, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

describe("AuditLogger", () => {
  let dir: string;
  let settings: LiveSettings;
  let metrics: Registry;
  let audit: AuditLogger;
  const setAudit = (config: AuditConfig) => settings.update({ ...settings.current(), audit: auditSettingsOf(config) });
  const serve = (c: AuditCompletion) => {
    audit.hooks.onRequestReceived(c);
    audit.hooks.onRequestComplete(c);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-logger-"));
    settings = new LiveSettings(defaultSettings());
    metrics = new Registry();
    audit = new AuditLogger({ settings, metrics });
  });
  after(async () => {
    await audit.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("AuditLogger writes nothing while audit is disabled", async () => {
    serve(request("get", "users"));
    assert.equal(audit.enabled(), false);
  });

  it("AuditLogger starts logging when the settings enable it, one line per stage", async () => {
    const path = join(dir, "a.log");
    setAudit({ enabled: true, level: 1, path });
    serve(request("get", "users"));
    await audit.settled();
    const events = await lines(path);
    assert.deepEqual(
      events.map((e) => `${e.stage} ${e.level} ${e.verb}`),
      ["RequestReceived Metadata get", "ResponseComplete Metadata get"],
    );
  });

  it("AuditLogger follows a policy change at once: omitted stages, levels and exclusions", async () => {
    const path = join(dir, "a.log");
    setAudit({
      enabled: true,
      path,
      policy: {
        omitStages: ["RequestReceived"],
        rules: [
          { level: "None", resources: [{ group: "management.platform.sh", resources: ["teams"] }] },
          { level: "RequestResponse" },
        ],
      },
    });
    serve(request("list", "teams"));
    serve(
      request("create", "users", {
        requestObject: () => ({ spec: { password: "hunter2" } }),
        responseObject: { ok: true },
      }),
    );
    const watch = request("watch", "users");
    audit.hooks.onRequestReceived(watch);
    audit.hooks.onResponseStarted(watch);
    await audit.settled();
    const events = (await lines(path)).slice(2);
    assert.deepEqual(
      events.map((e) => `${e.stage} ${e.level} ${e.verb}`),
      ["ResponseComplete RequestResponse create", "ResponseStarted RequestResponse watch"],
    );
    assert.equal(events[0].requestObject.spec.password, "<redacted>");
    assert.deepEqual(events[0].responseObject, { ok: true });
  });

  it("AuditLogger decides once per request through its slot, and again after a settings change", async () => {
    const path = join(dir, "slot.log");
    setAudit({ enabled: true, level: 1, path });
    const slot = { hookValue: undefined as unknown };
    const get = request("get", "users", { id: "id-slot", slot });
    audit.hooks.onRequestReceived(get);
    assert.notEqual(slot.hookValue, undefined, "the decision is kept in the request's slot");
    const kept = slot.hookValue;
    audit.hooks.onRequestComplete(get);
    assert.equal(slot.hookValue, kept, "later stages reuse it");
    const next = request("get", "users", { id: "id-slot-2", slot: { hookValue: undefined } });
    audit.hooks.onRequestReceived(next);
    setAudit({ enabled: true, path, policy: { omitStages: ["ResponseComplete"], rules: [{ level: "Metadata" }] } });
    audit.hooks.onRequestComplete(next);
    await audit.settled();
    assert.deepEqual(
      (await lines(path)).map((e) => `${e.auditID} ${e.stage}`),
      ["id-slot RequestReceived", "id-slot ResponseComplete", "id-slot-2 RequestReceived"],
      "a stage after the change follows the new policy",
    );
  });

  it("AuditLogger writes held events in the order they were logged, each at the level and time of its logging", async () => {
    const path = join(dir, "held.log");
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const clock = new AuditLogger({ settings, now: () => new Date(now) });
    try {
      setAudit({ enabled: true, level: 1, path });
      // More events than are held at once, two requests interleaved, the second's completion before the first's.
      const logged: string[] = [];
      for (let i = 0; i < 150; i++) {
        const [a, b] = [request("get", "users", { id: `held-${i}-a` }), request("get", "teams", { id: `held-${i}-b` })];
        for (const [hook, c, stage] of [
          [clock.hooks.onRequestReceived, a, "RequestReceived"],
          [clock.hooks.onRequestReceived, b, "RequestReceived"],
          [clock.hooks.onRequestComplete, b, "ResponseComplete"],
          [clock.hooks.onRequestComplete, a, "ResponseComplete"],
        ] as const) {
          now += 1;
          hook(c);
          logged.push(`${c.id} ${stage} Metadata ${new Date(now).toISOString().slice(0, -1)}000Z`);
        }
      }
      // Held events keep the level they were logged at across a change of the settings.
      const last = request("get", "users", { id: "held-last", responseObject: { kind: "User" } });
      clock.hooks.onRequestReceived(last);
      logged.push(`held-last RequestReceived Metadata ${new Date(now).toISOString().slice(0, -1)}000Z`);
      setAudit({ enabled: true, level: 3, path });
      clock.hooks.onRequestComplete({ ...last, slot: undefined });
      logged.push(`held-last ResponseComplete RequestResponse ${new Date(now).toISOString().slice(0, -1)}000Z`);
      await clock.settled();
      const events = await lines(path);
      assert.deepEqual(
        events.map((e) => `${e.auditID} ${e.stage} ${e.level} ${e.stageTimestamp}`),
        logged,
      );
      assert.deepEqual(events.at(-1)?.responseObject, { kind: "User" });
    } finally {
      await clock.close();
    }
  });

  it("AuditLogger reuses the last decision for a like request only while no rule names users or groups", async () => {
    const path = join(dir, "alike.log");
    const as = (id: string, name: string, target = "a") =>
      request("get", "users", {
        id,
        user: { name, groups: ["system:authenticated"] },
        requestInfo: { ...request("get", "users").requestInfo, name: target },
        slot: { hookValue: undefined },
      });
    setAudit({ enabled: true, level: 1, path });
    const [first, second] = [as("alike-1", "alice"), as("alike-2", "bob")];
    serve(first);
    serve(second);
    assert.equal(first.slot?.hookValue, second.slot?.hookValue, "one decision for both");
    setAudit({ enabled: true, path, policy: { rules: [{ level: "Metadata", users: ["alice"] }] } });
    serve(as("alike-3", "alice"));
    serve(as("alike-4", "bob"));
    const named = { group: "management.platform.sh", resources: ["users"], resourceNames: ["b"] };
    setAudit({ enabled: true, path, policy: { rules: [{ level: "Metadata", resources: [named] }] } });
    for (const c of [as("alike-5", "bob"), as("alike-6", "bob", "b"), as("alike-7", "bob")]) serve(c);
    await audit.settled();
    assert.deepEqual(
      [...new Set((await lines(path)).map((e) => e.auditID))],
      ["alike-1", "alike-2", "alike-3", "alike-6"],
      "bob's request like alice's is decided for bob; a request naming another object is decided for it",
    );
  });

  it("AuditLogger writes an event with a large body at once, so held events keep no large payload alive", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    setAudit({ enabled: true, level: 1, path: join(dir, "large.log") });
    let large: WeakRef<object> | undefined;
    (() => {
      const c = request("create", "users", { id: "large", requestBytes: 70_000 });
      large = new WeakRef(c);
      audit.hooks.onRequestComplete(c);
    })();
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef keeps its target until the task ends
    gc();
    assert.equal(large?.deref(), undefined, "its event was written and the request let go");
    await audit.settled();
    assert.deepEqual(
      (await lines(join(dir, "large.log"))).map((e) => e.auditID),
      ["large"],
    );
  });

  it("AuditLogger writes a minimal event, after the events held before it, when the policy cannot be evaluated", async () => {
    const path = join(dir, "undecided.log");
    setAudit({ enabled: true, path, policy: { rules: [{ level: "Metadata", userGroups: ["ops"] }] } });
    const ops = { name: "ops", groups: ["ops"] };
    serve(request("create", "users", { id: "large", user: ops, requestBytes: 70_000 })); // written at once
    serve(request("get", "users", { id: "before", user: ops })); // held
    // A caller without groups (never made by the server) makes the userGroups rule throw.
    const odd = request("get", "users", { id: "undecided", user: { name: "odd" } as AuditCompletion["user"] });
    audit.hooks.onRequestReceived(odd);
    await audit.settled();
    const events = await lines(path);
    assert.deepEqual(
      events.map((e) => `${e.auditID} ${e.stage}`),
      [
        "large RequestReceived",
        "large ResponseComplete",
        "before RequestReceived",
        "before ResponseComplete",
        "undecided RequestReceived",
      ],
    );
    assert.ok(events[4].annotations["audit.platform.sh/event-incomplete"]);
  });

  it("AuditLogger moves to a new file when the path changes, and stops when disabled", async () => {
    const next = join(dir, "b", "b.log");
    setAudit({ enabled: true, level: 1, path: next });
    serve(request("get", "configs"));
    await audit.settled();
    assert.equal((await lines(next)).length, 2);
    setAudit({ enabled: false, path: next });
    serve(request("get", "configs"));
    await audit.settled();
    assert.equal((await lines(next)).length, 2);
  });

  it("AuditLogger counts events by level in the metrics", async () => {
    const text = await metrics.metrics();
    assert.match(text, /apiserver_audit_event_total \d+/);
    assert.match(text, /apiserver_audit_level_total\{level="Metadata"\} \d+/);
    assert.match(text, /apiserver_audit_level_total\{level="RequestResponse"\} 2/);
  });
});

describe("AuditLogger and events that cannot be built", () => {
  let dir: string;
  let path: string;
  let audit: AuditLogger;
  let decoded = 0;
  const write = (name: string, extra: Partial<AuditCompletion> = {}) =>
    request("update", "users", {
      id: `id-${name}`,
      requestInfo: { ...request("update", "users").requestInfo, name },
      requestObject: () => {
        decoded++;
        return { kind: "User", metadata: { name } };
      },
      requestBytes: 40,
      ...extra,
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-logger-faults-"));
    path = join(dir, "audit.log");
    const settings = new LiveSettings(defaultSettings());
    settings.update({ ...settings.current(), audit: auditSettingsOf({ enabled: true, level: 3, path }) });
    audit = new AuditLogger({
      settings,
      testOnlyRequestObjectFault: (r) => {
        if (r.requestInfo.name === "faulty") throw new Error("injected fault");
      },
    });
  });
  after(async () => {
    await audit.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("AuditLogger builds the request object when the body is read and reuses it at completion", async () => {
    const prepared = audit.hooks.onRequestBody(write("alice"));
    assert.equal(decoded, 1);
    audit.hooks.onRequestComplete({ ...write("alice"), prepared });
    assert.equal(decoded, 1, "the body is not decoded again");
    await audit.settled();
    const event = (await lines(path)).find((e) => e.auditID === "id-alice");
    assert.deepEqual(event?.requestObject, { kind: "User", metadata: { name: "alice" } });
  });

  it("AuditLogger throws from the request-body hook when the request object cannot be built", () => {
    assert.throws(() => audit.hooks.onRequestBody(write("faulty")), /injected fault/);
  });

  it("AuditLogger writes a minimal event for a request refused because its event could not be built", async () => {
    audit.hooks.onRequestComplete({ ...write("faulty"), code: 500, preparationFailed: true });
    await audit.settled();
    const event = (await lines(path)).find((e) => e.auditID === "id-faulty");
    assert.deepEqual(event, {
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "Metadata",
      auditID: "id-faulty",
      stage: "ResponseComplete",
      requestURI: "/apis/management.platform.sh/v1/users",
      verb: "update",
      user: { username: "admin", groups: ["system:authenticated"] },
      sourceIPs: [],
      objectRef: { resource: "users", name: "faulty", apiGroup: "management.platform.sh", apiVersion: "v1" },
      responseStatus: { metadata: {}, code: 500 },
      requestReceivedTimestamp: event?.requestReceivedTimestamp,
      stageTimestamp: event?.stageTimestamp,
      annotations: {
        "audit.platform.sh/event-incomplete": "the full event could not be built; this one stands in for it",
      },
    });
  });

  it("AuditLogger writes a minimal event instead of dropping one whose response cannot be serialized", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    audit.hooks.onRequestComplete({ ...write("cyclic"), responseObject: cyclic });
    await audit.settled();
    const event = (await lines(path)).find((e) => e.auditID === "id-cyclic");
    assert.equal(event?.level, "Metadata");
    assert.equal(event?.responseStatus.code, 200);
    assert.equal(event?.objectRef.name, "cyclic");
    assert.ok(event?.annotations["audit.platform.sh/event-incomplete"]);
  });
});

describe("AuditLogger with a datastore", () => {
  let dir: string;
  let audit: AuditLogger;
  let metrics: Registry;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-logger-store-"));
    const settings = new LiveSettings(defaultSettings());
    settings.update({
      ...settings.current(),
      audit: auditSettingsOf({ enabled: true, level: 1, path: join(dir, "audit.log") }),
    });
    metrics = new Registry();
    audit = new AuditLogger({ settings, metrics, dataDir: dir });
  });
  after(async () => {
    await audit.close();
    await rm(dir, { recursive: true, force: true });
  });
  const serveAs = (id: string, user: string, userAgent: string) => {
    const c = request("get", "teams", { id, user: { name: user, groups: ["system:authenticated"] }, userAgent });
    audit.hooks.onRequestReceived(c);
    audit.hooks.onRequestComplete(c);
  };

  it("AuditLogger writes each event line to the file and the datastore alike", async () => {
    const get = request("get", "teams", { id: "id-store-1" });
    audit.hooks.onRequestReceived(get);
    audit.hooks.onRequestComplete(get);
    await audit.settled();
    const file = (await lines(join(dir, "audit.log"))).filter((e) => e.auditID === "id-store-1");
    const stored = await audit.byAuditId("id-store-1");
    assert.deepEqual(
      stored.map((e) => JSON.parse(e.line)),
      file,
    );
    assert.deepEqual(
      stored.map((e) => e.instance),
      ["", ""],
    );
    assert.match(await metrics.metrics(), /platform_audit_datastore_events_total 2/);
  });

  it("AuditLogger hands lines to the file and the datastore byte for byte: non-ASCII, larger than a batch, in order", async () => {
    const before = (await lines(join(dir, "audit.log"))).length;
    const users = ["zoë", "用户", "emoji 😀", 'quote " and \\ backslash'];
    // Metadata events of ~1 KiB: a batch buffer (1 MiB) fills several times, so buffers are handed back and reused.
    const long = "a".repeat(1000);
    for (let i = 0; i < 3000; i++) {
      serveAs(`id-order-${i}`, users[i % users.length], i === 1500 ? "x".repeat(BATCH_BYTES + 10) : long);
    }
    await audit.settled();
    const file = (await lines(join(dir, "audit.log"))).slice(before);
    assert.equal(file.length, 6000);
    assert.deepEqual(
      file.map((e) => `${e.auditID} ${e.stage} ${e.user.username}`),
      Array.from({ length: 6000 }, (_, n) => {
        const i = Math.floor(n / 2);
        return `id-order-${i} ${n % 2 ? "ResponseComplete" : "RequestReceived"} ${users[i % users.length]}`;
      }),
    );
    assert.equal(file[3000].userAgent.length, BATCH_BYTES + 10, "a line larger than a batch is written whole");
    for (const i of [0, 1499, 1500, 2999]) {
      const stored = await audit.byAuditId(`id-order-${i}`);
      assert.deepEqual(
        stored.map((e) => JSON.parse(e.line)),
        file.slice(2 * i, 2 * i + 2),
      );
    }
  });

  it("AuditLogger.ingest() stores a virtual cluster's events in the datastore only, tagged with its instance", async () => {
    const line = JSON.stringify({ kind: "Event", auditID: "vc-1", stage: "ResponseComplete", verb: "create" });
    audit.ingest([line], "p-demo/vc1");
    await audit.settled();
    const result = await audit.search({
      filters: [{ column: "instance", equals: true, value: "p-demo/vc1" }],
      limit: 5,
    });
    assert.deepEqual(
      result.events.map((e) => e.line),
      [line],
    );
    const file = await lines(join(dir, "audit.log"));
    assert.equal(
      file.some((e) => e.auditID === "vc-1"),
      false,
    );
  });
});
