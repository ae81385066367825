// Server-side printing for `kubectl get`: a meta.k8s.io/v1 Table with Name, the resource's columns and Age, each row
// carrying the object as PartialObjectMetadata (kubectl builds the NAMESPACE column and labels from it).

import type { KubeObject, ListMeta } from "../apimachinery/types.ts";
import type { ResourceDefinition, TableColumn } from "../registry/types.ts";

export interface TableOptions {
  /** resourceVersion/continue/remainingItemCount of the list (or the object's resourceVersion for a single GET). */
  listMeta?: ListMeta;
  /** What each row's `object` holds: metadata only (default), the whole object, or nothing. */
  includeObject?: "None" | "Metadata" | "Object";
  /** The time ages are measured against; defaults to now. */
  now?: Date;
}

// ObjectMeta field documentation, as the apiserver's table convertors use for these columns.
const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_TIMESTAMP_DESCRIPTION =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

export function toTable(definition: ResourceDefinition, objects: KubeObject[], options: TableOptions = {}): object {
  const now = (options.now ?? new Date()).getTime();
  const columns: TableColumn[] = definition.columns ?? [];
  const columnDefinitions = [
    { name: "Name", type: "string", format: "name", description: NAME_DESCRIPTION, priority: 0 },
    ...columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description,
      priority: c.priority ?? 0,
    })),
    ...(definition.noAgeColumn
      ? []
      : [{ name: "Age", type: "string", format: "", description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0 }]),
  ];
  const rows = objects.map((object) => {
    const cells: unknown[] = [object.metadata.name ?? ""];
    for (const column of columns) cells.push(cellValue(column, object, now));
    if (!definition.noAgeColumn) cells.push(age(object.metadata.creationTimestamp, now));
    const rowObject = tableRowObject(object, options.includeObject ?? "Metadata");
    return rowObject === undefined ? { cells } : { cells, object: rowObject };
  });
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMetaOf(options.listMeta),
    columnDefinitions,
    rows,
  };
}

/** apimachinery's duration.HumanDuration: about two significant figures ("45s", "5m3s", "5h3m", "10d", "2y30d"). */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  // Up to two seconds in the future counts as now (clock skew between machines).
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

function tableRowObject(object: KubeObject, include: "None" | "Metadata" | "Object"): object | undefined {
  if (include === "None") return undefined;
  if (include === "Object") return object;
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: object.metadata };
}

function listMetaOf(listMeta: ListMeta | undefined): ListMeta {
  const meta: ListMeta = {};
  if (listMeta?.resourceVersion !== undefined) meta.resourceVersion = listMeta.resourceVersion;
  if (listMeta?.continue) meta.continue = listMeta.continue;
  if (listMeta?.remainingItemCount !== undefined) meta.remainingItemCount = listMeta.remainingItemCount;
  return meta;
}

function cellValue(column: TableColumn, object: KubeObject, now: number): unknown {
  let value: unknown;
  try {
    value = column.cell(object);
  } catch {
    // A column that cannot be computed for one object must not fail the whole list.
    return "";
  }
  if (column.type === "date") return age(value, now);
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.length === 0 ? "<none>" : value.map(stringify).join(",");
  if (column.type === "string") return stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return value;
  return stringify(value);
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return String(value);
}

function age(timestamp: unknown, now: number): string {
  if (timestamp === undefined || timestamp === null || timestamp === "") return "<unknown>";
  const time = timestamp instanceof Date ? timestamp.getTime() : new Date(String(timestamp)).getTime();
  if (Number.isNaN(time)) return "<invalid>";
  return humanDuration(now - time);
}
