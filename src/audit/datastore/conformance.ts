// The shared suite every AuditStore backend runs: appends and searches by each selector, newest first, paging that
// stays stable while events are appended, every stage of a request by its audit ID, and the retention sweep.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { auditEventFields } from "./event-fields.ts";
import type { AuditEventRow, AuditSearch, AuditStore } from "./types.ts";

export interface SampleEvent {
  id: string;
  user?: string;
  verb?: string;
  resource?: string;
  namespace?: string;
  name?: string;
  code?: number;
  stage?: string;
  time: number;
  instance?: string;
}

/** A row as the writer makes it: an audit event line and the fields read from it. */
export function sampleRow(sample: SampleEvent): AuditEventRow {
  const stage = sample.stage ?? "ResponseComplete";
  const event = {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "Metadata",
    auditID: sample.id,
    stage,
    requestURI: `/apis/management.platform.sh/v1/${sample.resource ?? "users"}`,
    verb: sample.verb ?? "get",
    user: { username: sample.user ?? "admin", groups: ["system:authenticated"] },
    sourceIPs: ["127.0.0.1"],
    objectRef: {
      resource: sample.resource ?? "users",
      ...(sample.namespace ? { namespace: sample.namespace } : {}),
      ...(sample.name ? { name: sample.name } : {}),
      apiGroup: "management.platform.sh",
      apiVersion: "v1",
    },
    ...(stage === "RequestReceived" ? {} : { responseStatus: { metadata: {}, code: sample.code ?? 200 } }),
    requestReceivedTimestamp: new Date(sample.time).toISOString(),
    stageTimestamp: new Date(sample.time).toISOString(),
  };
  const line = JSON.stringify(event);
  return { ...auditEventFields(line, 0), instance: sample.instance ?? "", line };
}

const ids = (result: { events: { line: string }[] }) =>
  result.events.map((event) => (JSON.parse(event.line) as { auditID: string }).auditID);

export interface AuditStoreUnderTest {
  store: AuditStore;
  cleanup(): Promise<void>;
}

/** Runs the suite; `open` gives an empty store each time. `skip` names why the backend cannot run here. */
export function describeAuditStoreConformance(
  name: string,
  open: () => Promise<AuditStoreUnderTest>,
  skip?: () => string | undefined,
): void {
  describe(`AuditStore conformance: ${name}`, () => {
    let subject: AuditStoreUnderTest | undefined;
    const store = () => subject!.store;
    const base = Date.parse("2026-11-01T00:00:00Z");
    const samples: SampleEvent[] = [
      { id: "a1", user: "alice", verb: "delete", resource: "teams", name: "red", code: 200, time: base + 1000 },
      { id: "a2", user: "alice", verb: "get", resource: "users", name: "bob", code: 404, time: base + 2000 },
      { id: "b1", user: "bob", verb: "create", resource: "projects", name: "p1", code: 201, time: base + 3000 },
      { id: "b2", user: "bob", verb: "list", resource: "virtualclusterinstances", namespace: "p-x", time: base + 4000 },
      {
        id: "b2",
        user: "bob",
        verb: "list",
        stage: "RequestReceived",
        resource: "virtualclusterinstances",
        namespace: "p-x",
        time: base + 3990,
      },
      { id: "c1", user: "carol", verb: "delete", resource: "teams", name: "blue", code: 403, time: base + 5000 },
      {
        id: "v1",
        user: "dev",
        verb: "create",
        resource: "services",
        namespace: "default",
        name: "web",
        instance: "p-x/vc1",
        time: base + 6000,
      },
    ];

    before(async () => {
      const reason = skip?.();
      if (reason) return;
      subject = await open();
      await store().append(samples.map(sampleRow));
    });
    after(async () => {
      await subject?.cleanup();
    });

    const search = (query: Partial<AuditSearch>) => store().search({ filters: [], limit: 100, ...query });
    const test = (title: string, body: () => Promise<void>) =>
      it(title, async (t) => {
        const reason = skip?.();
        if (reason) {
          t.diagnostic(reason);
          t.skip(reason);
          return;
        }
        await body();
      });

    test("search() returns every event newest first", async () => {
      assert.deepEqual(ids(await search({})), ["v1", "c1", "b2", "b2", "b1", "a2", "a1"]);
    });

    test("search() selects on user, verb, resource, namespace, name, code, stage and instance", async () => {
      const by = async (column: AuditSearch["filters"][number]["column"], value: string | number, equals = true) =>
        ids(await search({ filters: [{ column, value, equals }] }));
      assert.deepEqual(await by("username", "alice"), ["a2", "a1"]);
      assert.deepEqual(await by("verb", "delete"), ["c1", "a1"]);
      assert.deepEqual(await by("resource", "teams"), ["c1", "a1"]);
      assert.deepEqual(await by("namespace", "p-x"), ["b2", "b2"]);
      assert.deepEqual(await by("name", "bob"), ["a2"]);
      assert.deepEqual(await by("code", 403), ["c1"]);
      assert.deepEqual(await by("stage", "RequestReceived"), ["b2"]);
      assert.deepEqual(await by("instance", "p-x/vc1"), ["v1"]);
      assert.deepEqual(await by("username", "bob", false), ["v1", "c1", "a2", "a1"]);
      const both = await search({
        filters: [
          { column: "username", value: "alice", equals: true },
          { column: "verb", value: "delete", equals: true },
        ],
      });
      assert.deepEqual(ids(both), ["a1"]);
    });

    test("search() bounds the time range: since inclusive, until exclusive", async () => {
      assert.deepEqual(ids(await search({ since: base + 2000, until: base + 4000 })), ["b2", "b1", "a2"]);
      const alice = await search({
        since: base + 1500,
        filters: [{ column: "username", value: "alice", equals: true }],
      });
      assert.deepEqual(ids(alice), ["a2"]);
    });

    test("search() pages stay stable while events are appended", async () => {
      const seen: string[] = [];
      let page = await search({ limit: 2 });
      let extra = 0;
      for (;;) {
        seen.push(...ids(page));
        // Newer events, and one older than every listed one, arrive between pages: none joins this listing.
        await store().append([
          sampleRow({ id: `new${extra}`, time: base + 10_000 + extra }),
          sampleRow({ id: `old${extra}`, time: base - 10_000 - extra }),
        ]);
        extra++;
        if (!page.next) break;
        page = await search({ limit: 2, after: page.next });
      }
      assert.deepEqual(seen, ["v1", "c1", "b2", "b2", "b1", "a2", "a1"]);
      const fresh = await search({ limit: 1 });
      assert.equal(ids(fresh)[0], `new${extra - 1}`, "a new listing sees the appended events");
    });

    test("byAuditId() returns every stage of a request, oldest first", async () => {
      const stages = await store().byAuditId("b2");
      assert.deepEqual(
        stages.map((event) => (JSON.parse(event.line) as { stage: string }).stage),
        ["RequestReceived", "ResponseComplete"],
      );
      assert.deepEqual(await store().byAuditId("nothing"), []);
    });

    test("byAuditId() answers with the platform's stages when a virtual cluster's events share the ID", async () => {
      await store().append([
        sampleRow({ id: "shared", user: "forger", instance: "p-x/vc1", time: base + 7000 }),
        sampleRow({ id: "shared", user: "admin", time: base + 500 }),
        sampleRow({ id: "vc-only", user: "dev", instance: "p-x/vc1", time: base + 7000 }),
      ]);
      const shared = await store().byAuditId("shared");
      assert.deepEqual(
        shared.map((event) => [
          event.instance,
          (JSON.parse(event.line) as { user: { username: string } }).user.username,
        ]),
        [["", "admin"]],
      );
      assert.deepEqual(
        (await store().byAuditId("vc-only")).map((event) => event.instance),
        ["p-x/vc1"],
      );
    });

    test("sweep() deletes the events older than the bound and keeps the rest", async () => {
      const deleted = await store().sweep(base + 2500);
      assert.ok(deleted >= 2, `deleted ${deleted}`);
      const left = ids(await search({ until: base + 7000 }));
      assert.deepEqual(left, ["v1", "c1", "b2", "b2", "b1"]);
      assert.equal(await store().sweep(base + 2500), 0);
    });

    test("append() stores a batch larger than one statement takes, all of it or, on a failure, none", async () => {
      const bulk = (instance: string, count: number) =>
        Array.from({ length: count }, (_, i) =>
          sampleRow({ id: `${instance}-${i}`, instance, time: base + 20_000 + i }),
        );
      const count = async (instance: string) =>
        (await search({ filters: [{ column: "instance", equals: true, value: instance }], limit: 10_000 })).events
          .length;
      await store().append(bulk("bulk", 6000));
      assert.equal(await count("bulk"), 6000);
      const failing = bulk("failing", 6000);
      // NOT NULL fails on the last row, after the first statement's rows went in.
      failing[5999] = { ...failing[5999], auditID: null as unknown as string };
      await assert.rejects(store().append(failing));
      assert.equal(await count("failing"), 0);
    });
  });
}
