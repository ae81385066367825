import assert from "node:assert/strict";
import { after, test } from "node:test";
import { type CompiledPatchSet, compilePatches } from "../patches/compile.ts";
import type { Patch } from "../patches/types.ts";
import { createTranslator } from "../translate/translator.ts";
import type { Informer } from "./informer.ts";
import { Reconciler, type Side } from "./reconciler.ts";
import { ReferenceTracker } from "./reference-tracker.ts";
import type { ResourceCalls } from "./resource-calls.ts";
import { StatsCounter } from "./stats.ts";
import type { SyncedResource, WireObject } from "./types.ts";

const sets: CompiledPatchSet[] = [];
after(() => {
  for (const set of sets) set.dispose();
});

/** An informer cache holding `objects` (the reconciler only reads it). */
function cache(objects: WireObject[]): Informer {
  const byKey = new Map(objects.map((object) => [`${object.metadata?.namespace}/${object.metadata?.name}`, object]));
  return {
    get: (namespace: string, name: string) => byKey.get(`${namespace}/${name}`),
    values: () => byKey.values(),
    size: byKey.size,
    progress: () => ({ epoch: 1, resourceVersion: "1" }),
  } as unknown as Informer;
}

/** Host calls that accept every create, answering with resourceVersion "5"; the created bodies are kept. */
function hostCalls(created: WireObject[]): Side["calls"] {
  const calls: ResourceCalls = {
    read: async () => assert.fail("no read expected"),
    create: async (_namespace, body) => {
      const answer = { ...body, metadata: { ...body.metadata, uid: "host-uid", resourceVersion: "5" } };
      created.push(answer);
      return answer;
    },
    replace: async () => assert.fail("no update expected"),
    replaceStatus: async () => assert.fail("no status update expected"),
    jsonPatch: async () => assert.fail("no patch expected"),
    delete: async () => assert.fail("no delete expected"),
  };
  return { services: calls, endpoints: calls, endpointslices: calls, secrets: calls, configmaps: calls };
}

function reconciler(endpointsPatches: Patch[], created: WireObject[]): Reconciler {
  const patches = compilePatches(endpointsPatches, "sync.toHost.endpoints.patches");
  sets.push(patches);
  const virtual: WireObject[] = [
    { metadata: { name: "web", namespace: "default", uid: "v-svc", resourceVersion: "1" }, spec: { ports: [] } },
    {
      metadata: { name: "web", namespace: "default", uid: "v-ep", resourceVersion: "2", annotations: { seen: "?" } },
      subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }],
    },
  ];
  const enabled: Partial<Record<SyncedResource, boolean>> = { endpoints: true };
  return new Reconciler({
    name: "vc",
    hostNamespace: "vc-host",
    context: {
      translator: createTranslator({ name: "vc", namespace: "vc-host" }),
      vcluster: { name: "vc", namespace: "vc-host", config: {} },
      patches: { endpoints: patches },
    },
    enabled,
    all: {},
    hostUnmanaged: {},
    virtual: { informers: { services: cache([virtual[0]]), endpoints: cache([virtual[1]]) }, calls: hostCalls([]) },
    host: { informers: { endpoints: cache([]) }, calls: hostCalls(created) },
    references: new ReferenceTracker(),
    stats: new StatsCounter(),
    enqueue: () => {},
  });
}

const KEY = "endpoints/default/web";
const echo = (reconciled: Reconciler, object: WireObject) => reconciled.hostEvent(KEY, "add", object);

test("Reconciler.hostEvent() needs no sync for the echo of its own write, only for later changes", async () => {
  const created: WireObject[] = [];
  const reconciled = reconciler([{ path: "metadata.annotations.owner", expression: "context.vcluster.name" }], created);
  await reconciled.reconcile(KEY);
  assert.equal(created.length, 1);
  assert.equal(echo(reconciled, created[0]), false, "the host object is the one written");
  const changed = { ...created[0], metadata: { ...created[0].metadata, resourceVersion: "9" } };
  assert.equal(echo(reconciled, changed), true, "someone else changed it");
  assert.equal(reconciled.hostEvent(KEY, "delete", created[0]), true, "deleted on the host");
});

test("Reconciler.hostEvent() syncs again after its own write when a patch reads the host object", async () => {
  const created: WireObject[] = [];
  const reconciled = reconciler(
    [{ path: "metadata.annotations.seen", expression: "context.hostObject ? 'yes' : 'no'" }],
    created,
  );
  await reconciled.reconcile(KEY);
  assert.equal(created[0].metadata?.annotations?.seen, "no");
  assert.equal(echo(reconciled, created[0]), true, "the desired object may follow the host object");
});
