// Shared by the tests of this folder: a User-like resource schema with every kind of list and map, and helpers
// that play the registry's part (create, update, apply) around the functions under test.

import { objectMetaSchema } from "../object-meta-schema.ts";
import type { JsonMap, KubeObject } from "../types.ts";
import { updateManagedFields } from "./managed-fields.ts";
import { serverSideApply } from "./server-side-apply.ts";
import type { ResetFields } from "./tracked-fields.ts";

export const API_VERSION = "management.platform.sh/v1";

export const userSchema: JsonMap = {
  type: "object",
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: objectMetaSchema,
    spec: {
      type: "object",
      properties: {
        email: { type: "string" },
        displayName: { type: "string" },
        disabled: { type: "boolean" },
        tags: { type: "array", items: { type: "string" } },
        groups: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
        access: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              verbs: { type: "array", items: { type: "string" } },
              scope: { type: "string" },
            },
          },
        },
        settings: { type: "object", additionalProperties: { type: "string" } },
        extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        profile: { type: "object", properties: { city: { type: "string" }, zip: { type: "string" } } },
        limits: { type: "object", "x-kubernetes-map-type": "atomic", properties: { cpu: { type: "string" } } },
      },
    },
    status: {
      type: "object",
      properties: {
        phase: { type: "string" },
        conditions: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["type"],
          items: { type: "object", properties: { type: { type: "string" }, status: { type: "string" } } },
        },
      },
    },
  },
};

export function user(spec: JsonMap, metadata: JsonMap = {}, rest: JsonMap = {}): KubeObject {
  return { apiVersion: API_VERSION, kind: "User", metadata: { name: "alice", ...metadata }, spec, ...rest };
}

let clock = 0;
/** A fresh, increasing timestamp per call (seconds apart, so entries order by time). */
export function nextTime(): string {
  clock++;
  return new Date(Date.UTC(2025, 0, 1, 0, 0, clock)).toISOString().replace(".000Z", "Z");
}

/** What the registry stores on create: server metadata plus managedFields. */
export function create(object: KubeObject, manager: string, resetFields: ResetFields = "none"): KubeObject {
  const stored = structuredClone(object);
  stored.metadata = { ...stored.metadata, uid: "uid-1", creationTimestamp: "2025-01-01T00:00:00Z", generation: 1 };
  stored.metadata.managedFields = updateManagedFields({
    schema: userSchema,
    old: undefined,
    object: stored,
    manager,
    apiVersion: API_VERSION,
    time: nextTime(),
    resetFields,
  });
  return stored;
}

/** What the registry stores after a non-apply write of `next` over `old`. */
export function update(
  old: KubeObject,
  next: KubeObject,
  manager: string,
  options: { subresource?: string; resetFields?: ResetFields } = {},
): KubeObject {
  const stored = structuredClone(next);
  stored.metadata.managedFields = updateManagedFields({
    schema: userSchema,
    old,
    object: stored,
    manager,
    apiVersion: API_VERSION,
    time: nextTime(),
    ...options,
  });
  return stored;
}

export function apply(
  live: KubeObject | undefined,
  config: KubeObject,
  manager: string,
  options: { force?: boolean; subresource?: string; resetFields?: ResetFields; time?: string } = {},
): KubeObject {
  return serverSideApply({
    schema: userSchema,
    live,
    config,
    manager,
    force: options.force ?? false,
    apiVersion: API_VERSION,
    time: options.time ?? nextTime(),
    subresource: options.subresource,
    resetFields: options.resetFields ?? "none",
  });
}

/** The fieldsV1 of one manager's entry, or undefined. */
export function fieldsOf(object: KubeObject, manager: string, operation?: "Apply" | "Update"): unknown {
  return object.metadata.managedFields?.find(
    (entry) => entry.manager === manager && (operation === undefined || entry.operation === operation),
  )?.fieldsV1;
}

export function managersOf(object: KubeObject): string[] {
  return (object.metadata.managedFields ?? []).map((entry) => `${entry.manager}/${entry.operation}`);
}
