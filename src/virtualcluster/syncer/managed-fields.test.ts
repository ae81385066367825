import assert from "node:assert/strict";
import { test } from "node:test";
import { withoutManagedFields } from "./managed-fields.ts";
import type { WireObject } from "./types.ts";

test("withoutManagedFields() drops metadata.managedFields and keeps everything else", () => {
  const answer: WireObject = {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: "db",
      namespace: "ns",
      resourceVersion: "7",
      labels: { app: "db" },
      managedFields: [
        {
          manager: "virtualcluster-syncer",
          operation: "Update" as const,
          apiVersion: "v1",
          time: "2026-01-01T00:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:subsets": {} },
        },
      ],
    },
    subsets: [{ addresses: [{ ip: "10.0.0.1" }] }],
  };
  const kept = withoutManagedFields(structuredClone(answer));
  const { managedFields: _fields, ...metadata } = answer.metadata ?? {};
  assert.deepEqual(kept, { ...answer, metadata });
  assert.ok(!("managedFields" in (kept.metadata ?? {})));
  const plain = { metadata: { name: "x" } };
  assert.equal(withoutManagedFields(plain), plain);
});
