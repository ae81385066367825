// managedFields entries as the field manager works with them (upstream internal.Managed): one field set per
// manager identifier. An identifier is the JSON of {manager, operation, apiVersion, subresource}, without the
// apiVersion for appliers (an applier keeps one entry whatever version it applies with).

import { compareUtf8 } from "../../utils/utf8-compare.ts";
import type { FieldsV1, ManagedFieldsEntry } from "../types.ts";
import { isPlainObject } from "../types.ts";
import type { FieldSet } from "./field-set.ts";
import { fromFieldsV1, toFieldsV1 } from "./fieldsv1.ts";
import { goQuote } from "./go-string.ts";

export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
}

export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

interface ManagerInfo {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion?: string;
  subresource?: string;
}

export function managerIdentifier(info: ManagerInfo): string {
  const id: Record<string, string> = {};
  if (info.manager) id.manager = info.manager;
  id.operation = info.operation;
  if (info.operation === "Update" && info.apiVersion) id.apiVersion = info.apiVersion;
  if (info.subresource) id.subresource = info.subresource;
  return JSON.stringify(id);
}

function parseIdentifier(identifier: string): ManagerInfo {
  try {
    const parsed: unknown = JSON.parse(identifier);
    if (isPlainObject(parsed)) {
      return {
        manager: typeof parsed.manager === "string" ? parsed.manager : "",
        operation: parsed.operation === "Apply" ? "Apply" : "Update",
        apiVersion: typeof parsed.apiVersion === "string" ? parsed.apiVersion : undefined,
        subresource: typeof parsed.subresource === "string" ? parsed.subresource : undefined,
      };
    }
  } catch {
    // Not an identifier (an internal name): reported as a bare manager name.
  }
  return { manager: identifier, operation: "Apply" };
}

/** `"kubectl"`, `"kubectl-patch" using management.platform.sh/v1`, `"x" with subresource "status" ...` */
export function describeManager(identifier: string): string {
  const info = parseIdentifier(identifier);
  let text = goQuote(info.manager);
  if (info.subresource) text += ` with subresource ${goQuote(info.subresource)}`;
  if (info.operation === "Update") text += ` using ${info.apiVersion ?? ""}`;
  return text;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export function copyManaged(managed: Managed): Managed {
  return { fields: new Map(managed.fields), times: new Map(managed.times) };
}

/**
 * Reads stored entries. Entries that are not valid (unknown operation, no apiVersion, unreadable fieldsV1) are
 * skipped rather than failing the write: they can only come from outside this server.
 */
export function decodeManaged(entries: unknown): Managed {
  const managed = emptyManaged();
  if (!Array.isArray(entries)) return managed;
  for (const entry of entries) {
    if (!isPlainObject(entry)) continue;
    const { manager, operation, apiVersion, subresource, fieldsType, fieldsV1, time } = entry;
    if (operation !== "Apply" && operation !== "Update") continue;
    if (typeof apiVersion !== "string" || apiVersion === "" || fieldsType !== "FieldsV1") continue;
    let set: FieldSet;
    try {
      set = fromFieldsV1((fieldsV1 ?? {}) as FieldsV1);
    } catch {
      continue;
    }
    const identifier = managerIdentifier({
      manager: typeof manager === "string" ? manager : "",
      operation,
      apiVersion,
      subresource: typeof subresource === "string" ? subresource : undefined,
    });
    managed.fields.set(identifier, { set, apiVersion, applied: operation === "Apply" });
    managed.times.set(identifier, typeof time === "string" ? time : undefined);
  }
  return managed;
}

function seconds(time: string | undefined): number {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** Entries in upstream order: Apply before Update, then oldest first, then by manager, version, subresource. */
export function encodeManaged(managed: Managed): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const [identifier, versioned] of managed.fields) {
    const info = parseIdentifier(identifier);
    const time = managed.times.get(identifier);
    const entry = {
      manager: info.manager,
      operation: versioned.applied ? "Apply" : info.operation,
      apiVersion: versioned.apiVersion,
      ...(time === undefined ? {} : { time }),
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(versioned.set),
      ...(info.subresource ? { subresource: info.subresource } : {}),
    } as ManagedFieldsEntry;
    entries.push(entry);
  }
  return entries.sort(
    (p, q) =>
      compareUtf8(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      compareUtf8(p.manager, q.manager) ||
      compareUtf8(p.apiVersion, q.apiVersion) ||
      compareUtf8(p.subresource ?? "", q.subresource ?? ""),
  );
}
