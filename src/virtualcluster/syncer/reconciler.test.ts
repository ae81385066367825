import assert from "node:assert/strict";
import { after, test } from "node:test";
import { KubeApiError } from "../kube/kube-api-error.ts";
import { type CompiledPatchSet, compilePatches } from "../patches/compile.ts";
import { loadEngine } from "../patches/sandbox/engine.ts";
import type { Patch } from "../patches/types.ts";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";
import { createTranslator } from "../translate/translator.ts";
import type { Informer } from "./informer.ts";
import type { InformerProgress } from "./key-state.ts";
import { Reconciler, type Side } from "./reconciler.ts";
import { ReferenceTracker } from "./reference-tracker.ts";
import type { ResourceCalls } from "./resource-calls.ts";
import { StatsCounter } from "./stats.ts";
import type { SyncedResource, WireObject } from "./types.ts";

// Expressions compile on the shared QuickJS engine, which loads on demand.
await loadEngine();

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

/**
 * A host informer whose contents and progress a test sets: what it has delivered so far, and in which list (epoch).
 * A test moves it on as the real one would after a watch event or a re-list.
 */
class HostView {
  objects = new Map<string, WireObject>();
  progress: InformerProgress = { epoch: 1, resourceVersion: "1" };
  readonly cache = {
    get: (namespace: string, name: string) => this.objects.get(`${namespace}/${name}`),
    values: () => this.objects.values(),
    progress: () => this.progress,
  } as unknown as Informer;

  /** The informer has delivered everything up to `resourceVersion`, `objects` being the host's objects then. */
  delivered(resourceVersion: string, objects: WireObject[], epoch = this.progress.epoch): void {
    this.objects = new Map(objects.map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o]));
    this.progress = { epoch, resourceVersion };
  }
}

/**
 * Host calls that accept every create, answering with resourceVersion "5"; the created bodies are kept. Updates
 * fail as `replace` says (by default, the test fails).
 */
function hostCalls(
  created: WireObject[],
  replace?: ResourceCalls["replace"],
  /** Awaited before a create answers (the test decides when the host's answer arrives). */
  answer?: () => Promise<void>,
): Side["calls"] {
  const calls: ResourceCalls = {
    read: async () => assert.fail("no read expected"),
    create: async (_namespace, body) => {
      await answer?.();
      const answered = { ...body, metadata: { ...body.metadata, uid: "host-uid", resourceVersion: "5" } };
      created.push(answered);
      return answered;
    },
    replace: replace ?? (async () => assert.fail("no update expected")),
    replaceStatus: async () => assert.fail("no status update expected"),
    jsonPatch: async () => assert.fail("no patch expected"),
    delete: async () => assert.fail("no delete expected"),
  };
  return { services: calls, endpoints: calls, endpointslices: calls, secrets: calls, configmaps: calls };
}

interface HostSide {
  view?: HostView;
  replace?: ResourceCalls["replace"];
  /** Keys the reconciler queued. */
  enqueued?: string[];
  /** Awaited before a create answers. */
  answer?: () => Promise<void>;
}

function reconciler(endpointsPatches: Patch[], created: WireObject[], host: HostSide = {}): Reconciler {
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
    host: {
      informers: { endpoints: host.view?.cache ?? cache([]) },
      calls: hostCalls(created, host.replace, host.answer),
    },
    references: new ReferenceTracker(),
    stats: new StatsCounter(),
    enqueue: (key) => host.enqueued?.push(key),
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

/** A create whose answer the test releases: the reconcile in flight, and the events the host delivers meanwhile. */
async function createInFlight(events: (reconciled: Reconciler) => boolean[]) {
  const created: WireObject[] = [];
  const enqueued: string[] = [];
  const answer = Promise.withResolvers<void>();
  const asked = Promise.withResolvers<void>();
  const reconciled = reconciler([], created, {
    enqueued,
    answer: () => {
      asked.resolve();
      return answer.promise;
    },
  });
  const sync = reconciled.reconcile(KEY);
  await asked.promise;
  const returned = events(reconciled);
  answer.resolve();
  await sync;
  return { returned, enqueued, created };
}

const hostCopy = (resourceVersion: string): WireObject => ({
  metadata: { name: "web-x-default-x-vc", namespace: "vc-host", resourceVersion, labels: { [MANAGED_BY_LABEL]: "vc" } },
});

test("Reconciler.hostEvent() needs no sync for the echo of a create delivered before the create's answer", async () => {
  const { returned, enqueued, created } = await createInFlight((reconciled) => [echo(reconciled, hostCopy("5"))]);
  assert.deepEqual(returned, [false], "judged when the answer comes");
  assert.deepEqual(enqueued, [], "the answer's resourceVersion: the echo of the create");
  assert.equal(created.length, 1);
});

test("Reconciler.hostEvent() syncs again after the answer for a change or delete delivered while a write was in flight", async () => {
  const changed = await createInFlight((reconciled) => [
    echo(reconciled, hostCopy("5")),
    echo(reconciled, hostCopy("6")),
  ]);
  assert.deepEqual(changed.returned, [false, false]);
  assert.deepEqual(changed.enqueued, [KEY], "a version after the create's: someone else changed the copy");
  const deleted = await createInFlight((reconciled) => [reconciled.hostEvent(KEY, "delete", hostCopy("5"))]);
  assert.deepEqual(deleted.enqueued, [KEY], "deleted on the host meanwhile");
});

test("Reconciler.hostListed() syncs again only keys whose last write the informer had not delivered", async () => {
  const view = new HostView();
  const created: WireObject[] = [];
  const enqueued: string[] = [];
  const reconciled = reconciler([], created, { view, enqueued });
  await reconciled.reconcile(KEY);
  reconciled.hostListed("endpoints");
  assert.deepEqual(enqueued, [KEY], "the create is not delivered yet: a re-list cannot tell whether it still exists");
  enqueued.length = 0;
  view.delivered("5", [created[0]]);
  assert.equal(echo(reconciled, created[0]), false);
  reconciled.hostListed("endpoints");
  assert.deepEqual(enqueued, [], "delivered after the answer: the write is forgotten");

  const early = new HostView();
  const again: string[] = [];
  const echoed = reconciler([], [], {
    view: early,
    enqueued: again,
    answer: async () => early.delivered("5", [hostCopy("5")]),
  });
  await echoed.reconcile(KEY);
  echoed.hostListed("endpoints");
  assert.deepEqual(again, [], "delivered before the answer: the write is never kept");
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

test("Reconciler.hostListed() syncs again a key whose create the host informer never delivered before a re-list", async () => {
  const created: WireObject[] = [];
  const view = new HostView();
  const enqueued: string[] = [];
  const reconciled = reconciler([], created, { view, enqueued });
  await reconciled.reconcile(KEY);
  assert.equal(created.length, 1);
  // The watch is down: the create (resourceVersion 5) is not delivered, so the syncer goes by its own write.
  await reconciled.reconcile(KEY);
  assert.equal(created.length, 1, "written, and not yet delivered: not created twice");
  // The host object is deleted, then the informer lists again: absent before and after, the list reports nothing.
  view.delivered("9", [], 2);
  reconciled.hostListed("endpoints");
  assert.deepEqual(enqueued, [KEY], "only the list can say the key needs a look");
  await reconciled.reconcile(KEY);
  assert.equal(created.length, 2, "created again from the list's view");
  // Once the informer has delivered the new copy, nothing relies on an undelivered write: a re-list queues nothing.
  view.delivered("10", [created[1]], 2);
  await reconciled.reconcile(KEY);
  view.delivered("11", [created[1]], 3);
  reconciled.hostListed("endpoints");
  assert.deepEqual(enqueued, [KEY]);
  assert.equal(created.length, 2);
});

test("Reconciler.reconcile() retries an update that finds the host object deleted, and creates it from the delete", async () => {
  const created: WireObject[] = [];
  const view = new HostView();
  // The informer still holds a copy the host has deleted (its delete event is not delivered yet).
  const stale: WireObject = {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: "web-x-default-x-vc",
      namespace: "vc-host",
      uid: "deleted-uid",
      resourceVersion: "3",
      labels: { [MANAGED_BY_LABEL]: "vc" },
    },
  };
  view.delivered("3", [stale]);
  let updates = 0;
  const replace = async () => {
    updates++;
    throw new KubeApiError(404, { reason: "NotFound", message: 'endpoints "web-x-default-x-vc" not found', code: 404 });
  };
  const reconciled = reconciler([], created, { view, replace });
  await assert.rejects(reconciled.reconcile(KEY), { name: "RetryError", message: /deleted meanwhile/ });
  assert.equal(updates, 1);
  view.delivered("4", []);
  await reconciled.reconcile(KEY);
  assert.equal(created.length, 1, "created once the informer has the delete");
  assert.equal(updates, 1);
});

test("Reconciler forgets a referenced object's host name once nothing references it", () => {
  const patches = compilePatches(
    [{ path: "metadata.annotations.cfg", reference: { apiVersion: "v1", kind: "ConfigMap" } }],
    "sync.toHost.services.patches",
  );
  sets.push(patches);
  let current: WireObject = {};
  const service = (config: string | undefined): WireObject => ({
    metadata: { name: "web", namespace: "default", uid: "v-svc", annotations: config ? { cfg: config } : {} },
    spec: { ports: [] },
  });
  const services = {
    get: () => current,
    values: () => [current].values(),
    size: 1,
    progress: () => ({ epoch: 1, resourceVersion: "1" }),
  } as unknown as Informer;
  const translator = createTranslator({ name: "vc", namespace: "vc-host" });
  const reconciled = new Reconciler({
    name: "vc",
    hostNamespace: "vc-host",
    context: { translator, vcluster: { name: "vc", namespace: "vc-host", config: {} }, patches: { services: patches } },
    enabled: { services: true, configmaps: true },
    all: {},
    hostUnmanaged: {},
    virtual: { informers: { services, configmaps: cache([]) }, calls: hostCalls([]) },
    host: { informers: { services: cache([]) }, calls: hostCalls([]) },
    references: new ReferenceTracker(),
    stats: new StatsCounter(),
    enqueue: () => {},
  });
  // A tenant points one Service's reference at a new ConfigMap name again and again.
  for (let i = 0; i < 1_000; i++) {
    current = service(`config-${i}`);
    reconciled.primeReferences("services/default/web");
  }
  assert.equal(reconciled.referencedHostNames, 1, "only the name referenced now");
  const hostName = translator.hostName("config-999", "default");
  assert.equal(reconciled.referencedKey("configmaps", "vc-host", hostName), "configmaps/default/config-999");
  current = service(undefined);
  reconciled.primeReferences("services/default/web");
  assert.equal(reconciled.referencedHostNames, 0);
  assert.equal(reconciled.referencedKey("configmaps", "vc-host", hostName), undefined);
});
