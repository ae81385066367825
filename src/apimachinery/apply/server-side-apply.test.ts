import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError, type StatusError } from "../errors.ts";
import type { KubeObject } from "../types.ts";
import { LAST_APPLIED_ANNOTATION } from "./last-applied.ts";
import { apply, create, fieldsOf, managersOf, update, user } from "./testing-fixtures.ts";

function applyError(run: () => unknown): StatusError {
  try {
    run();
  } catch (error) {
    if (isStatusError(error)) return error;
    throw error;
  }
  assert.fail("expected a StatusError");
}

/** What `kubectl apply` (client-side) stores on create: the object and its last-applied annotation. */
function clientSideApplied(object: KubeObject, withAnnotation = true): KubeObject {
  const annotated = structuredClone(object);
  if (withAnnotation) {
    annotated.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: `${JSON.stringify(object)}\n` };
  }
  return create(annotated, "kubectl-client-side-apply");
}

describe("serverSideApply()", () => {
  it("serverSideApply() creates the object and makes the applier own exactly its config", () => {
    const created = apply(
      undefined,
      user({ email: "a@example.com", groups: ["g"] }, { labels: { app: "web" } }),
      "kubectl",
    );
    assert.deepEqual(created.spec, { email: "a@example.com", groups: ["g"] });
    assert.deepEqual(managersOf(created), ["kubectl/Apply"]);
    assert.deepEqual(fieldsOf(created, "kubectl"), {
      "f:metadata": { "f:labels": { "f:app": {} } },
      "f:spec": { "f:email": {}, "f:groups": { 'v:"g"': {} } },
    });
  });

  it("serverSideApply() reports a conflict with another manager", () => {
    const live = clientSideApplied(user({ email: "a@example.com", displayName: "A" }), false);
    const error = applyError(() => apply(live, user({ email: "b@example.com", displayName: "A" }), "kubectl"));
    assert.equal(error.code, 409);
    assert.equal(error.reason, "Conflict");
    assert.equal(
      error.message,
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using management.platform.sh/v1: .spec.email',
    );
    assert.deepEqual(error.status.details, {
      causes: [
        {
          reason: "FieldManagerConflict",
          message: 'conflict with "kubectl-client-side-apply" using management.platform.sh/v1',
          field: ".spec.email",
        },
      ],
    });
  });

  it("serverSideApply() reports a conflict when another tool applies over kubectl's client-side apply", () => {
    const live = clientSideApplied(user({ email: "a@example.com" }));
    const error = applyError(() => apply(live, user({ email: "b@example.com" }), "ci-tool"));
    assert.match(
      error.message,
      /^Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using .*: \.spec\.email$/,
    );
  });

  it("serverSideApply() lets kubectl take over what its last-applied annotation explains, as upstream", () => {
    const live = clientSideApplied(user({ email: "a@example.com" }, { labels: { app: "web" } }));
    const applied = apply(live, user({ email: "b@example.com" }, { labels: { app: "web" } }), "kubectl");
    assert.equal((applied.spec as { email: string }).email, "b@example.com");
    assert.deepEqual(fieldsOf(applied, "kubectl"), {
      "f:metadata": { "f:labels": { "f:app": {} } },
      "f:spec": { "f:email": {} },
    });
    assert.deepEqual(fieldsOf(applied, "kubectl-client-side-apply"), {
      "f:metadata": {
        "f:annotations": { ".": {}, [`f:${LAST_APPLIED_ANNOTATION}`]: {} },
        "f:labels": { ".": {}, "f:app": {} },
      },
      "f:spec": {},
    });
    // The annotation now describes what kubectl applied.
    const annotation = applied.metadata.annotations?.[LAST_APPLIED_ANNOTATION] ?? "";
    assert.equal(JSON.parse(annotation).spec.email, "b@example.com");
    assert.ok(annotation.endsWith("\n"));
  });

  it("serverSideApply() still conflicts for kubectl on fields changed since its client-side apply", () => {
    const live = clientSideApplied(user({ email: "a@example.com" }));
    const patched = update(live, { ...structuredClone(live), spec: { email: "other@example.com" } }, "kubectl-patch");
    const error = applyError(() => apply(patched, user({ email: "c@example.com" }), "kubectl"));
    assert.equal(
      error.message,
      'Apply failed with 1 conflict: conflict with "kubectl-patch" using management.platform.sh/v1: .spec.email',
    );
  });

  it("serverSideApply() with force takes the field over", () => {
    const live = clientSideApplied(user({ email: "a@example.com", displayName: "A" }), false);
    const forced = apply(live, user({ email: "b@example.com" }), "kubectl", { force: true });
    assert.deepEqual(forced.spec, { email: "b@example.com", displayName: "A" });
    assert.deepEqual(fieldsOf(forced, "kubectl"), { "f:spec": { "f:email": {} } });
    assert.deepEqual(fieldsOf(forced, "kubectl-client-side-apply"), { "f:spec": { ".": {}, "f:displayName": {} } });
  });

  it("serverSideApply() reports several conflicts grouped by sorted manager", () => {
    let live = apply(undefined, user({ email: "a", displayName: "A" }), "zeta");
    live = update(live, { ...structuredClone(live), spec: { email: "a", displayName: "A", disabled: false } }, "alpha");
    const error = applyError(() => apply(live, user({ email: "b", displayName: "B", disabled: true }), "kubectl"));
    assert.equal(
      error.message,
      'Apply failed with 3 conflicts: conflicts with "alpha" using management.platform.sh/v1:\n- .spec.disabled\nconflicts with "zeta":\n- .spec.displayName\n- .spec.email',
    );
    assert.deepEqual(
      error.status.details?.causes?.map((c) => `${c.message} ${c.field}`),
      [
        'conflict with "alpha" using management.platform.sh/v1 .spec.disabled',
        'conflict with "zeta" .spec.displayName',
        'conflict with "zeta" .spec.email',
      ],
    );
  });

  it("serverSideApply() shares a field two appliers set to the same value, and keeps it until both drop it", () => {
    let live = apply(undefined, user({ email: "a", displayName: "A" }), "first");
    live = apply(live, user({ email: "a" }), "second");
    assert.deepEqual(fieldsOf(live, "first"), { "f:spec": { "f:displayName": {}, "f:email": {} } });
    assert.deepEqual(fieldsOf(live, "second"), { "f:spec": { "f:email": {} } });

    live = apply(live, user({ displayName: "A" }), "first");
    assert.deepEqual(live.spec, { email: "a", displayName: "A" }, "still owned by second: only released");
    live = apply(live, user({ displayName: "B" }), "second", { force: true });
    assert.deepEqual(live.spec, { displayName: "B" }, "second dropped email, nobody owns it any more");
    assert.deepEqual(managersOf(live), ["second/Apply"]);
  });

  it("serverSideApply() removes fields, map keys and structs dropped from the config", () => {
    let live = apply(
      undefined,
      user({ email: "a", profile: { city: "x" }, settings: { a: "1", b: "2" } }, { labels: { app: "w" } }),
      "kubectl",
    );
    live = apply(live, user({ email: "a", settings: { a: "1" } }), "kubectl");
    assert.deepEqual(live.spec, { email: "a", settings: { a: "1" } });
    assert.equal(live.metadata.labels, undefined);
    assert.equal(live.metadata.name, "alice");
  });

  it("serverSideApply() keeps fields others updated when the applier drops its own", () => {
    let live = apply(undefined, user({ email: "a", displayName: "A" }), "kubectl");
    live = update(
      live,
      { ...structuredClone(live), spec: { email: "a", displayName: "A", disabled: true } },
      "controller",
    );
    live = apply(live, user({ email: "a" }), "kubectl");
    assert.deepEqual(live.spec, { email: "a", disabled: true });
  });

  it("serverSideApply() merges set and map lists by item between appliers", () => {
    let live = apply(undefined, user({ groups: ["a"], access: [{ name: "read", verbs: ["get"] }] }), "one");
    live = apply(live, user({ groups: ["b"], access: [{ name: "write", verbs: ["put"] }] }), "two");
    assert.deepEqual(live.spec, {
      groups: ["a", "b"],
      access: [
        { name: "read", verbs: ["get"] },
        { name: "write", verbs: ["put"] },
      ],
    });
    assert.deepEqual(fieldsOf(live, "two"), {
      "f:spec": {
        "f:access": { 'k:{"name":"write"}': { ".": {}, "f:name": {}, "f:verbs": {} } },
        "f:groups": { 'v:"b"': {} },
      },
    });
    // An item's atomic field owned by another applier conflicts; other items do not.
    const error = applyError(() => apply(live, user({ access: [{ name: "read", verbs: ["list"] }] }), "two"));
    assert.equal(error.status.details?.causes?.[0].field, '.spec.access[name="read"].verbs');

    live = apply(live, user({ groups: [], access: [] }), "one");
    assert.deepEqual(live.spec, { groups: ["b"], access: [{ name: "write", verbs: ["put"] }] });
  });

  it("serverSideApply() orders merged list items as the config, keeping live-only items in place", () => {
    let live = apply(undefined, user({ access: [{ name: "a" }, { name: "b" }, { name: "c" }] }), "one");
    live = apply(live, user({ access: [{ name: "c" }, { name: "x" }, { name: "a" }] }), "two");
    assert.deepEqual(
      (live.spec as { access: { name: string }[] }).access.map((item) => item.name),
      ["b", "c", "x", "a"],
    );
  });

  it("serverSideApply() replaces atomic lists and atomic maps as a whole", () => {
    let live = apply(undefined, user({ tags: ["a", "b"], limits: { cpu: "1" } }), "one");
    const error = applyError(() => apply(live, user({ tags: ["a"], limits: { cpu: "2" } }), "two"));
    assert.deepEqual(
      error.status.details?.causes?.map((cause) => cause.field),
      [".spec.limits", ".spec.tags"],
    );
    live = apply(live, user({ tags: ["c"] }), "two", { force: true });
    assert.deepEqual(live.spec, { tags: ["c"], limits: { cpu: "1" } });
    assert.deepEqual(fieldsOf(live, "two"), { "f:spec": { "f:tags": {} } });
    assert.deepEqual(fieldsOf(live, "one"), { "f:spec": { "f:limits": {} } });
  });

  it("serverSideApply() attributes the fields of an untracked object to before-first-apply", () => {
    const live = user({ email: "a", displayName: "A" }, { uid: "u", resourceVersion: "3", labels: { x: "y" } });
    const error = applyError(() => apply(live, user({ email: "b" }), "kubectl"));
    assert.match(
      error.message,
      /conflict with "before-first-apply" using management\.platform\.sh\/v1: \.spec\.email$/,
    );
    const applied = apply(live, user({ email: "a" }), "kubectl");
    assert.deepEqual(managersOf(applied), ["kubectl/Apply", "before-first-apply/Update"]);
    assert.deepEqual(fieldsOf(applied, "before-first-apply"), {
      "f:metadata": { "f:labels": { ".": {}, "f:x": {} } },
      "f:spec": { ".": {}, "f:displayName": {}, "f:email": {} },
    });
  });

  it("serverSideApply() ignores status through the main resource and spec through /status", () => {
    const created = apply(undefined, user({ email: "a" }, {}, { status: { phase: "Forged" } }), "kubectl", {
      resetFields: "status",
    });
    assert.equal(created.status, undefined);
    assert.deepEqual(Object.keys(fieldsOf(created, "kubectl") as object), ["f:spec"]);

    const status = apply(
      created,
      user({ email: "ignored" }, {}, { status: { phase: "Ready", conditions: [{ type: "Ok", status: "True" }] } }),
      "controller",
      {
        subresource: "status",
        resetFields: "spec",
      },
    );
    assert.deepEqual(status.spec, { email: "a" });
    assert.deepEqual(status.status, { phase: "Ready", conditions: [{ type: "Ok", status: "True" }] });
    const entry = status.metadata.managedFields?.find((e) => e.manager === "controller");
    assert.equal(entry?.subresource, "status");
    assert.deepEqual(entry?.fieldsV1, {
      "f:status": { "f:conditions": { 'k:{"type":"Ok"}': { ".": {}, "f:status": {}, "f:type": {} } }, "f:phase": {} },
    });
    // Changing status through the main resource neither conflicts nor changes it.
    const main = apply(status, user({ email: "a" }, {}, { status: { phase: "Other" } }), "kubectl", {
      resetFields: "status",
    });
    assert.deepEqual(main.status, status.status);
  });

  it("serverSideApply() keeps the live object's identity and server-owned metadata", () => {
    const live = create(user({ email: "a" }, { resourceVersion: "9" }), "kubectl-create");
    const config = user(
      { email: "a" },
      { uid: "forged", resourceVersion: "1", creationTimestamp: "1999-01-01T00:00:00Z", generation: 7 },
    );
    const applied = apply(live, config, "kubectl");
    for (const key of ["uid", "resourceVersion", "creationTimestamp", "generation", "name"] as const) {
      assert.deepEqual(applied.metadata[key], live.metadata[key], key);
    }
  });

  it("serverSideApply() rejects managedFields and duplicate list items in the config", () => {
    const withManaged = user({ email: "a" }, { managedFields: [] });
    assert.equal(
      applyError(() => apply(undefined, withManaged, "kubectl")).message,
      "metadata.managedFields must be nil",
    );
    const duplicate = applyError(() => apply(undefined, user({ access: [{ name: "a" }, { name: "a" }] }), "kubectl"));
    assert.equal(duplicate.code, 400);
    assert.equal(
      duplicate.message,
      'failed to create typed patch object (/alice; management.platform.sh/v1, Kind=User): .spec.access: duplicate entries for key [name="a"]',
    );
    const keyless = applyError(() => apply(undefined, user({ access: [{ verbs: ["get"] }] }), "kubectl"));
    assert.match(
      keyless.message,
      /\.spec\.access: element 0: associative list with keys has an element that omits all key fields \["name"\]/,
    );
  });

  it("serverSideApply() treats __proto__ and constructor as plain keys", () => {
    const config = JSON.parse(
      '{"apiVersion":"management.platform.sh/v1","kind":"User","metadata":{"name":"alice","labels":{"__proto__":"x","constructor":"y"}},"spec":{"settings":{"__proto__":"z"},"extra":{"__proto__":{"polluted":true}}}}',
    ) as KubeObject;
    const applied = apply(undefined, config, "kubectl");
    assert.equal(Object.hasOwn(applied.metadata.labels ?? {}, "__proto__"), true);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(fieldsOf(applied, "kubectl"), {
      "f:metadata": { "f:labels": { "f:__proto__": {}, "f:constructor": {} } },
      "f:spec": { "f:extra": { "f:__proto__": { ".": {}, "f:polluted": {} } }, "f:settings": { "f:__proto__": {} } },
    });
    const dropped = apply(applied, user({}, { labels: { constructor: "y" } }), "kubectl");
    assert.deepEqual(Object.keys(dropped.metadata.labels ?? {}), ["constructor"]);
  });

  it("serverSideApply() does not modify its inputs", () => {
    const live = clientSideApplied(user({ email: "a", access: [{ name: "r" }] }));
    const config = user({ email: "a", access: [{ name: "w" }] });
    const before = structuredClone([live, config]);
    apply(live, config, "kubectl", { force: true });
    assert.deepEqual([live, config], before);
  });

  it("serverSideApply() is idempotent: applying the same config again changes nothing", () => {
    const spec = fc.record(
      {
        email: fc.string({ maxLength: 3 }),
        tags: fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }),
        groups: fc.uniqueArray(fc.constantFrom("a", "b", "c"), { maxLength: 3 }),
        access: fc.uniqueArray(
          fc.record(
            { name: fc.constantFrom("r", "w"), verbs: fc.array(fc.constantFrom("get", "put"), { maxLength: 2 }) },
            { requiredKeys: ["name"] },
          ),
          { selector: (item) => item.name, maxLength: 2 },
        ),
        settings: fc.dictionary(fc.constantFrom("a", "b"), fc.string({ maxLength: 2 }), { maxKeys: 2 }),
        extra: fc.dictionary(fc.constantFrom("p", "q"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(spec, spec, fc.boolean(), (first, second, force) => {
        const base = apply(undefined, user(JSON.parse(JSON.stringify(first))), "one", { time: "2025-01-01T00:00:00Z" });
        let live: KubeObject;
        try {
          live = apply(base, user(JSON.parse(JSON.stringify(second))), "two", { force, time: "2025-01-02T00:00:00Z" });
        } catch (error) {
          if (isStatusError(error) && error.code === 409) return;
          throw error;
        }
        const again = apply(live, user(JSON.parse(JSON.stringify(second))), "two", { time: "2025-01-03T00:00:00Z" });
        assert.deepEqual(again, live);
      }),
    );
  });
});
