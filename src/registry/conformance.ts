// The resource conformance tester: every rule the generic store promises, run against one resource definition.
// A new resource calls describeResourceConformance() from its test file with a valid sample object.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import { eventually } from "../utils/testing-eventually.ts";
import type { GenericStore } from "./store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "./testing.ts";
import type { ResourceDefinition } from "./types.ts";

export interface ResourceConformanceOptions {
  definition: ResourceDefinition;
  /** A valid object of this kind with the given name (the tester sets the namespace of namespaced kinds). */
  sample(name: string): KubeObject;
  /** Changes the desired state (spec) in a valid way, so generation must move. */
  changeSpec(object: KubeObject): void;
  /** Other definitions the resource needs registered (owners, referenced kinds). */
  alsoRegister?: ResourceDefinition[];
}

export function describeResourceConformance(options: ResourceConformanceOptions): void {
  const { definition } = options;
  const namespace = definition.namespaced ? "conformance" : undefined;
  const qualified = definition.group ? `${definition.plural}.${definition.group}` : definition.plural;

  describe(`${definition.kind} conformance`, () => {
    let env: TestRegistry;
    let store: GenericStore;
    const sample = (name: string): KubeObject => {
      const object = options.sample(name);
      if (namespace) object.metadata.namespace = namespace;
      return object;
    };
    const create = (name: string) => store.create(testContext(), namespace, sample(name), {});
    const ref = (name: string) => ({ namespace, name });

    before(async () => {
      env = await openTestRegistry([definition, ...(options.alsoRegister ?? [])]);
      store = env.store(definition);
    });
    after(() => env.close());

    it("create() fills uid, creationTimestamp, resourceVersion and generation 1", async () => {
      const created = await create("fills-meta");
      assert.match(created.metadata.uid ?? "", /^[0-9a-f-]{36}$/);
      assert.match(created.metadata.creationTimestamp ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.match(created.metadata.resourceVersion ?? "", /^\d+$/);
      assert.equal(created.metadata.generation, 1);
      assert.deepEqual(await store.get(testContext(), ref("fills-meta")), created);
    });

    it("create() of an existing name answers 409 AlreadyExists", async () => {
      await create("twice");
      const error = await statusErrorOf(create("twice"));
      assert.equal(error.code, 409);
      assert.equal(error.reason, "AlreadyExists");
      assert.equal(error.message, `${qualified} "twice" already exists`);
    });

    it("create() with generateName appends five random characters", async () => {
      const object = sample("");
      object.metadata.name = undefined;
      object.metadata.generateName = "gen-";
      const created = await store.create(testContext(), namespace, object, {});
      assert.match(created.metadata.name ?? "", /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    });

    it("create() without name or generateName answers 422 naming metadata.name", async () => {
      const object = sample("");
      delete object.metadata.name;
      const error = await statusErrorOf(store.create(testContext(), namespace, object, {}));
      assert.equal(error.code, 422);
      assert.deepEqual(error.status.details?.causes?.[0], {
        reason: "FieldValueRequired",
        message: "Required value: name or generateName is required",
        field: "metadata.name",
      });
    });

    it("create() refuses an invalid name with 422 and stores nothing", async () => {
      // Not_Valid breaks the DNS-1123 rule; a path-segment kind (RBAC) refuses only "/" and "%".
      const invalid = definition.nameValidation === "path-segment" ? "not/valid" : "Not_Valid";
      const error = await statusErrorOf(create(invalid));
      assert.equal(error.code, 422);
      assert.equal(error.status.details?.causes?.[0]?.field, "metadata.name");
      await statusErrorOf(store.get(testContext(), ref(invalid)));
    });

    it("create() with a resourceVersion answers 400", async () => {
      const object = sample("with-rv");
      object.metadata.resourceVersion = "5";
      assert.equal((await statusErrorOf(store.create(testContext(), namespace, object, {}))).code, 400);
    });

    it("create() with dryRun stores nothing", async () => {
      const created = await store.create(testContext(), namespace, sample("dry"), { dryRun: true });
      assert.equal(created.metadata.name, "dry");
      assert.equal((await statusErrorOf(store.get(testContext(), ref("dry")))).code, 404);
    });

    it("create() handles unknown fields per fieldValidation", async () => {
      const withUnknown = (name: string) => ({ ...sample(name), bogus: { a: 1 } });
      const strict = await statusErrorOf(
        store.create(testContext(), namespace, withUnknown("strict"), { fieldValidation: "Strict" }),
      );
      assert.equal(strict.code, 400);
      assert.match(strict.message, /strict decoding error: unknown field "bogus"/);
      const context = testContext();
      const warned = await store.create(context, namespace, withUnknown("warned"), { fieldValidation: "Warn" });
      assert.deepEqual(context.warnings, ['unknown field "bogus"']);
      assert.equal("bogus" in warned, false);
      const ignoreContext = testContext();
      await store.create(ignoreContext, namespace, withUnknown("ignored"), { fieldValidation: "Ignore" });
      assert.deepEqual(ignoreContext.warnings, []);
    });

    it("update() without resourceVersion answers 422 as upstream", {
      skip: definition.allowUnconditionalUpdate,
    }, async () => {
      const created = await create("no-rv");
      delete created.metadata.resourceVersion;
      const error = await statusErrorOf(store.update(testContext(), ref("no-rv"), created, {}));
      assert.equal(error.code, 422);
      assert.match(error.message, /metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/);
    });

    it("update() without resourceVersion replaces the stored object, as upstream for this kind", {
      skip: !definition.allowUnconditionalUpdate,
    }, async () => {
      const created = await create("no-rv-allowed");
      const moved = structuredClone(created);
      moved.metadata.labels = { moved: "first" };
      const first = await store.update(testContext(), ref("no-rv-allowed"), moved, {});
      const blind = structuredClone(created);
      delete blind.metadata.resourceVersion;
      blind.metadata.labels = { blind: "write" };
      const replaced = await store.update(testContext(), ref("no-rv-allowed"), blind, {});
      assert.deepEqual(replaced.metadata.labels, { blind: "write" });
      assert.ok(Number(replaced.metadata.resourceVersion) > Number(first.metadata.resourceVersion));
      assert.equal(replaced.metadata.uid, created.metadata.uid);
      const missing = sample("no-rv-missing");
      delete missing.metadata.resourceVersion;
      assert.equal((await statusErrorOf(store.update(testContext(), ref("no-rv-missing"), missing, {}))).code, 404);
    });

    it("update() with a stale resourceVersion answers 409 Conflict", async () => {
      const created = await create("stale");
      const first = structuredClone(created);
      first.metadata.labels = { a: "1" };
      await store.update(testContext(), ref("stale"), first, {});
      created.metadata.labels = { a: "2" };
      const error = await statusErrorOf(store.update(testContext(), ref("stale"), created, {}));
      assert.equal(error.code, 409);
      assert.equal(
        error.message,
        `Operation cannot be fulfilled on ${qualified} "stale": the object has been modified; please apply your changes to the latest version and try again`,
      );
    });

    it("update() keeps uid and creationTimestamp, and refuses a changed uid", async () => {
      const created = await create("keeps");
      const body = structuredClone(created);
      delete body.metadata.uid;
      delete body.metadata.creationTimestamp;
      body.metadata.labels = { changed: "yes" };
      const updated = await store.update(testContext(), ref("keeps"), body, {});
      assert.equal(updated.metadata.uid, created.metadata.uid);
      assert.equal(updated.metadata.creationTimestamp, created.metadata.creationTimestamp);
      updated.metadata.uid = "00000000-0000-0000-0000-000000000000";
      assert.equal((await statusErrorOf(store.update(testContext(), ref("keeps"), updated, {}))).code, 422);
    });

    it("update() bumps generation on a spec change only", async () => {
      const created = await create("generation");
      const labelled = structuredClone(created);
      labelled.metadata.labels = { only: "metadata" };
      const afterLabel = await store.update(testContext(), ref("generation"), labelled, {});
      assert.equal(afterLabel.metadata.generation, 1);
      options.changeSpec(afterLabel);
      const afterSpec = await store.update(testContext(), ref("generation"), afterLabel, {});
      assert.equal(afterSpec.metadata.generation, 2);
    });

    it("update() that changes nothing keeps the resourceVersion", async () => {
      const created = await create("noop");
      const again = await store.update(testContext(), ref("noop"), structuredClone(created), {});
      assert.equal(again.metadata.resourceVersion, created.metadata.resourceVersion);
    });

    it("update() of a missing object answers 404, and a name mismatch 400", async () => {
      const object = { ...sample("missing"), metadata: { ...sample("missing").metadata, resourceVersion: "1" } };
      assert.equal((await statusErrorOf(store.update(testContext(), ref("missing"), object, {}))).code, 404);
      const created = await create("named");
      const error = await statusErrorOf(store.update(testContext(), ref("other"), created, {}));
      assert.equal(error.code, 400);
      assert.equal(error.message, "the name of the object (named) does not match the name on the URL (other)");
    });

    it("patch() applies JSON and merge patches; a failing test op answers 422", async () => {
      await create("patched");
      const merged = await store.patch(
        testContext(),
        ref("patched"),
        "merge",
        { metadata: { labels: { m: "1" } } },
        {},
      );
      assert.equal(merged.object.metadata.labels?.m, "1");
      const json = await store.patch(
        testContext(),
        ref("patched"),
        "json",
        [{ op: "add", path: "/metadata/labels/j", value: "2" }],
        {},
      );
      assert.deepEqual(json.object.metadata.labels, { m: "1", j: "2" });
      const failed = await statusErrorOf(
        store.patch(
          testContext(),
          ref("patched"),
          "json",
          [{ op: "test", path: "/metadata/labels/j", value: "x" }],
          {},
        ),
      );
      assert.equal(failed.code, 422);
    });

    it("patch() of type apply creates, then reports a conflict with another manager", async () => {
      const config = sample("applied");
      config.metadata.labels = { owner: "first" };
      const first = await store.patch(testContext(), ref("applied"), "apply", config, { fieldManager: "first" });
      assert.equal(first.created, true);
      const second = sample("applied");
      second.metadata.labels = { owner: "second" };
      const conflict = await statusErrorOf(
        store.patch(testContext(), ref("applied"), "apply", second, { fieldManager: "second" }),
      );
      assert.equal(conflict.code, 409);
      assert.equal(conflict.status.details?.causes?.[0]?.reason, "FieldManagerConflict");
      const forced = await store.patch(testContext(), ref("applied"), "apply", second, {
        fieldManager: "second",
        force: true,
      });
      assert.equal(forced.object.metadata.labels?.owner, "second");
      const missingManager = await statusErrorOf(store.patch(testContext(), ref("applied"), "apply", second, {}));
      assert.equal(missingManager.code, 422);
    });

    it("delete() removes at once without finalizers", async () => {
      await create("gone");
      const result = await store.delete(testContext(), ref("gone"), {});
      assert.equal(result.removed, true);
      assert.equal((await statusErrorOf(store.get(testContext(), ref("gone")))).code, 404);
    });

    it("delete() with a finalizer marks the object; finalizers may only be removed; removal completes it", async () => {
      const object = sample("finalized");
      object.metadata.finalizers = ["example.com/hold"];
      await store.create(testContext(), namespace, object, {});
      const pending = await store.delete(testContext(), ref("finalized"), {});
      assert.equal(pending.removed, false);
      assert.ok(pending.object.metadata.deletionTimestamp);
      assert.equal(pending.object.metadata.deletionGracePeriodSeconds, 0);
      const adding = structuredClone(pending.object);
      adding.metadata.finalizers = ["example.com/hold", "example.com/more"];
      const refused = await statusErrorOf(store.update(testContext(), ref("finalized"), adding, {}));
      assert.equal(refused.code, 422);
      assert.match(refused.message, /no new finalizers can be added if the object is being deleted/);
      const releasing = structuredClone(pending.object);
      releasing.metadata.finalizers = [];
      await store.update(testContext(), ref("finalized"), releasing, {});
      assert.equal((await statusErrorOf(store.get(testContext(), ref("finalized")))).code, 404);
    });

    it("delete() checks uid and resourceVersion preconditions", async () => {
      await create("preconditioned");
      const uid = await statusErrorOf(
        store.delete(testContext(), ref("preconditioned"), { preconditions: { uid: "not-the-uid" } }),
      );
      assert.equal(uid.code, 409);
      assert.match(uid.message, /the UID in the precondition \(not-the-uid\) does not match the UID in record/);
    });

    it("create() refuses two controller owner references", async () => {
      const object = sample("two-controllers");
      object.metadata.ownerReferences = [
        { apiVersion: "v1", kind: "A", name: "a", uid: "u1", controller: true },
        { apiVersion: "v1", kind: "B", name: "b", uid: "u2", controller: true },
      ];
      const error = await statusErrorOf(store.create(testContext(), namespace, object, {}));
      assert.equal(error.code, 422);
      assert.match(error.message, /Only one reference can have Controller set to true/);
    });

    it("create() refuses blockOwnerDeletion without delete permission on the owner", async () => {
      const object = sample("blocking");
      object.metadata.ownerReferences = [
        { apiVersion: "v1", kind: "A", name: "a", uid: "u1", blockOwnerDeletion: true },
      ];
      const denied = testContext({ authorizer: { authorize: async () => ({ allowed: false }) } });
      const error = await statusErrorOf(store.create(denied, namespace, object, {}));
      assert.equal(error.code, 422);
      assert.equal(error.status.details?.causes?.[0]?.field, "metadata.ownerReferences[0].blockOwnerDeletion");
    });

    it("list() filters by label and pages with continue tokens", async () => {
      for (let i = 0; i < 7; i++) {
        const object = sample(`page-${i}`);
        object.metadata.labels = { paged: "yes", parity: i % 2 ? "odd" : "even" };
        await store.create(testContext(), namespace, object, {});
      }
      const names: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await store.list(testContext(), {
          namespace,
          labelSelector: "paged=yes",
          limit: 3,
          continue: token,
        });
        names.push(...page.items.map((o) => o.metadata.name ?? ""));
        token = page.metadata.continue;
        pages++;
      } while (token);
      assert.equal(pages, 3);
      assert.deepEqual(names, ["page-0", "page-1", "page-2", "page-3", "page-4", "page-5", "page-6"]);
      const odd = await store.list(testContext(), { namespace, labelSelector: "paged=yes,parity=odd" });
      assert.equal(odd.items.length, 3);
      const unfiltered = await store.list(testContext(), { namespace, limit: 1 });
      assert.ok((unfiltered.metadata.remainingItemCount ?? 0) > 0);
      const badField = await statusErrorOf(store.list(testContext(), { namespace, fieldSelector: "spec.nothing=1" }));
      assert.equal(badField.message, "field label not supported: spec.nothing");
    });

    it("getEncoded(), listEncoded() and createEncoded() answer what get(), list() and create() answer", async () => {
      const created = JSON.parse((await store.createEncoded(testContext(), namespace, sample("encoded"), {})).json);
      const read = await store.get(testContext(), ref("encoded"));
      assert.deepEqual(created, read);
      assert.deepEqual(JSON.parse((await store.getEncoded(testContext(), ref("encoded"))).json), read);
      const options = { namespace, limit: 2 };
      assert.deepEqual(
        JSON.parse((await store.listEncoded(testContext(), options)).json),
        await store.list(testContext(), options),
      );
    });

    it("watch() sends the current state for resourceVersion 0, then changes", async () => {
      await create("watched");
      const events: { type: string; name?: string }[] = [];
      const handle = await store.watch(
        testContext(),
        { namespace, fieldSelector: "metadata.name=watched", resourceVersion: "0" },
        {
          send: (event) => {
            events.push({ type: event.type, name: (event.object as KubeObject).metadata?.name });
            return true;
          },
          end: () => {},
        },
      );
      await store.patch(testContext(), ref("watched"), "merge", { metadata: { labels: { w: "1" } } }, {});
      await store.delete(testContext(), ref("watched"), {});
      await eventually(() => events.length >= 3, "the watch's three events");
      handle.close();
      assert.deepEqual(events, [
        { type: "ADDED", name: "watched" },
        { type: "MODIFIED", name: "watched" },
        { type: "DELETED", name: "watched" },
      ]);
    });
  });
}
