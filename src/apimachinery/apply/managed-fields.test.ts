import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../types.ts";
import { updateManagedFields } from "./managed-fields.ts";
import { API_VERSION, create, fieldsOf, managersOf, update, user, userSchema } from "./testing-fixtures.ts";

function edit(object: KubeObject, change: (copy: KubeObject) => void): KubeObject {
  const copy = structuredClone(object);
  change(copy);
  return copy;
}

describe("updateManagedFields()", () => {
  it("updateManagedFields() gives the creator every field it set, with '.' on maps it created", () => {
    const created = create(
      user({ email: "a@example.com", groups: ["g"] }, { labels: { app: "web" } }),
      "kubectl-create",
    );
    assert.deepEqual(created.metadata.managedFields, [
      {
        manager: "kubectl-create",
        operation: "Update",
        apiVersion: API_VERSION,
        time: created.metadata.managedFields?.[0].time,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
          "f:spec": { ".": {}, "f:email": {}, "f:groups": { ".": {}, 'v:"g"': {} } },
        },
      },
    ]);
  });

  it("updateManagedFields() after a label change moves f:metadata.f:labels.f:app to the new manager", () => {
    const created = create(
      user({ email: "a" }, { labels: { app: "web", tier: "front" } }),
      "kubectl-client-side-apply",
    );
    const labelled = update(
      created,
      edit(created, (o) => {
        o.metadata.labels = { app: "api", tier: "front" };
      }),
      "kubectl-label",
    );
    assert.deepEqual(fieldsOf(labelled, "kubectl-label"), { "f:metadata": { "f:labels": { "f:app": {} } } });
    assert.deepEqual(fieldsOf(labelled, "kubectl-client-side-apply"), {
      "f:metadata": { "f:labels": { ".": {}, "f:tier": {} } },
      "f:spec": { ".": {}, "f:email": {} },
    });
  });

  it("updateManagedFields() removes deleted fields from every manager and drops emptied entries", () => {
    const created = create(user({ email: "a" }, { annotations: { note: "x" } }), "kubectl-create");
    const annotated = update(
      created,
      edit(created, (o) => {
        o.metadata.annotations = { note: "y" };
      }),
      "kubectl-annotate",
    );
    const cleared = update(
      annotated,
      edit(annotated, (o) => {
        delete o.metadata.annotations;
      }),
      "kubectl-patch",
    );
    assert.deepEqual(managersOf(cleared), ["kubectl-create/Update"]);
    assert.deepEqual(fieldsOf(cleared, "kubectl-create"), { "f:spec": { ".": {}, "f:email": {} } });
  });

  it("updateManagedFields() merges a manager's writes into one entry and only then moves its time", () => {
    const created = create(user({ email: "a" }), "kubectl-create");
    const patched = update(
      created,
      edit(created, (o) => {
        (o.spec as { email: string }).email = "b";
      }),
      "kubectl-patch",
    );
    const again = update(
      patched,
      edit(patched, (o) => {
        (o.spec as { disabled?: boolean }).disabled = true;
      }),
      "kubectl-patch",
    );
    const entries = again.metadata.managedFields ?? [];
    assert.equal(entries.filter((e) => e.manager === "kubectl-patch").length, 1);
    assert.deepEqual(fieldsOf(again, "kubectl-patch"), { "f:spec": { "f:disabled": {}, "f:email": {} } });
    const patchTime = entries.find((e) => e.manager === "kubectl-patch")?.time;
    assert.notEqual(patchTime, patched.metadata.managedFields?.find((e) => e.manager === "kubectl-patch")?.time);

    const unchanged = update(again, structuredClone(again), "kubectl-patch");
    assert.deepEqual(unchanged.metadata.managedFields, again.metadata.managedFields);
  });

  it("updateManagedFields() keeps separate entries per subresource and resets status on the main resource", () => {
    const created = create(user({ email: "a" }), "kubectl-create", "status");
    const withStatus = update(
      created,
      edit(created, (o) => {
        o.status = { phase: "Ready" };
      }),
      "controller",
      {
        subresource: "status",
        resetFields: "spec",
      },
    );
    const entry = withStatus.metadata.managedFields?.find((e) => e.manager === "controller");
    assert.equal(entry?.subresource, "status");
    assert.deepEqual(entry?.fieldsV1, { "f:status": { ".": {}, "f:phase": {} } });
    // Through the main resource, status changes are not this write's to own.
    const main = update(
      withStatus,
      edit(withStatus, (o) => {
        o.status = { phase: "Gone" };
        (o.spec as { email: string }).email = "b";
      }),
      "editor",
      {
        resetFields: "status",
      },
    );
    assert.deepEqual(fieldsOf(main, "editor"), { "f:spec": { "f:email": {} } });
    assert.deepEqual(fieldsOf(main, "controller"), { "f:status": { ".": {}, "f:phase": {} } });
  });

  it("updateManagedFields() names an empty manager unknown and ignores managedFields sent by the client", () => {
    const created = create(user({ email: "a" }), "kubectl-create");
    const forged = edit(created, (o) => {
      (o.spec as { email: string }).email = "b";
      o.metadata.managedFields = [
        {
          manager: "forged",
          operation: "Apply",
          apiVersion: API_VERSION,
          time: "2020-01-01T00:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: {},
        },
      ];
    });
    const result = updateManagedFields({
      schema: userSchema,
      old: created,
      object: forged,
      manager: "",
      apiVersion: API_VERSION,
      time: "2025-02-01T00:00:00Z",
    });
    assert.deepEqual(
      result.map((e) => e.manager),
      ["kubectl-create", "unknown"],
    );
  });

  it("updateManagedFields() does not start tracking an existing object that has no managedFields", () => {
    const old = user({ email: "a" }, { uid: "u" });
    const result = updateManagedFields({
      schema: userSchema,
      old,
      object: user({ email: "b" }, { uid: "u" }),
      manager: "x",
      apiVersion: API_VERSION,
      time: "2025-02-01T00:00:00Z",
    });
    assert.deepEqual(result, []);
  });

  it("updateManagedFields() merges the oldest of more than ten update managers into ancient-changes", () => {
    let object = create(user({ email: "a" }), "m0");
    for (let i = 1; i <= 11; i++) {
      object = update(
        object,
        edit(object, (o) => {
          (o.spec as Record<string, unknown>).displayName = `n${i}`;
          o.metadata.labels = { ...o.metadata.labels, [`l${i}`]: "x" };
        }),
        `m${i}`,
      );
    }
    const names = (object.metadata.managedFields ?? []).map((e) => e.manager);
    assert.equal(names.length, 10);
    assert.ok(names.includes("ancient-changes"));
    assert.ok(!names.includes("m0") && !names.includes("m1") && !names.includes("m2"));
    assert.deepEqual(fieldsOf(object, "ancient-changes"), {
      "f:metadata": { "f:labels": { ".": {}, "f:l1": {}, "f:l2": {} } },
      "f:spec": { ".": {}, "f:email": {} },
    });
  });

  it("updateManagedFields() does not modify its inputs", () => {
    const created = create(user({ email: "a", access: [{ name: "r" }] }), "kubectl-create");
    const next = edit(created, (o) => {
      (o.spec as { access: unknown[] }).access = [{ name: "w" }];
    });
    const before = structuredClone([created, next]);
    updateManagedFields({
      schema: userSchema,
      old: created,
      object: next,
      manager: "x",
      apiVersion: API_VERSION,
      time: "2025-02-01T00:00:00Z",
    });
    assert.deepEqual([created, next], before);
  });
});
