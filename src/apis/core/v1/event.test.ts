import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { testContext } from "../../../registry/testing.ts";
import { type Event, eventDefinition } from "./event.ts";
import { type KindHarness, kindHarness } from "./testing.ts";

const definition = eventDefinition;
const event = (name: string, fields: Partial<Event>, namespace = "default"): Event => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace },
  involvedObject: { kind: "Service", name: "web", namespace },
  reason: "SyncError",
  message: "patch failed",
  type: "Warning",
  count: 1,
  firstTimestamp: "2025-01-01T00:00:00Z",
  lastTimestamp: "2025-01-01T00:00:00Z",
  ...fields,
});

describeResourceConformance({
  definition,
  sample: (name) =>
    event(name, { involvedObject: { kind: "Service", name: "web", namespace: "conformance" } }, "conformance"),
  changeSpec: (object) => {
    (object as Event).count = 2;
  },
});

describe("Event", () => {
  let h: KindHarness;
  before(async () => {
    h = await kindHarness(definition);
  });
  after(() => h.close());

  it("create() refuses an involved object in another namespace and an unknown type", async () => {
    assert.deepEqual(
      await h.invalid(
        h.create(event("bad", { involvedObject: { kind: "Service", name: "web", namespace: "other" }, type: "Error" })),
      ),
      [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
        'type: Unsupported value: "Error": supported values: "Normal", "Warning"',
      ],
    );
  });

  it("events about cluster-scoped objects live in default", async () => {
    const created = await h.create(event("ns-event", { involvedObject: { kind: "Namespace", name: "shop" } }));
    assert.equal(created.metadata.namespace, "default");
  });

  it("list() selects by involvedObject fields, reason and type (kubectl describe's query)", async () => {
    await h.create(event("one", {}));
    await h.create(
      event("two", { involvedObject: { kind: "Endpoints", name: "web", namespace: "default" }, type: "Normal" }),
    );
    const store = h.env.store(definition);
    const names = async (fieldSelector: string) =>
      (await store.list(testContext(), { namespace: "default", fieldSelector })).items.map((e) => e.metadata.name);
    assert.deepEqual(
      await names("involvedObject.name=web,involvedObject.namespace=default,involvedObject.kind=Service"),
      ["one"],
    );
    assert.deepEqual(await names("type=Normal"), ["two"]);
    assert.deepEqual(await names("reason=SyncError,involvedObject.kind=Endpoints"), ["two"]);
  });
});
