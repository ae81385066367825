// Printing data: server-side Tables as aligned text (columns follow the server), and objects as YAML or JSON.
// Cells come from the server, so control characters are escaped before they reach a terminal.

import { stringify } from "yaml";

export interface TableColumnDefinition {
  name: string;
  type?: string;
  priority?: number;
}

export interface TableRow {
  cells: unknown[];
  object?: { metadata?: { name?: string; namespace?: string } };
}

export interface ServerTable {
  kind?: string;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
  metadata?: { continue?: string };
}

export interface RenderOptions {
  /** Also the columns of priority > 0 (`-o wide`). */
  wide?: boolean;
  /** Put a NAMESPACE column first (namespaced resources listed across namespaces). */
  namespaceColumn?: boolean;
  /** Wraps the header line (bold on a colour terminal). */
  header?: (text: string) => string;
}

// C0, DEL and C1 controls: an escape sequence in a name or display name must not drive the terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** One cell as text: kubectl's `<none>` for missing values, JSON for structures, controls escaped. */
export function cellText(value: unknown): string {
  let text: string;
  if (value === undefined || value === null) text = "<none>";
  else if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "boolean") text = String(value);
  else text = JSON.stringify(value);
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** Aligned columns, upper-case headers, three spaces apart, no trailing blanks; "" when there are no rows. */
export function renderTable(table: ServerTable, options: RenderOptions = {}): string {
  if (table.rows.length === 0) return "";
  const shown = table.columnDefinitions
    .map((column, index) => ({ column, index }))
    .filter(({ column }) => options.wide || (column.priority ?? 0) === 0);
  const headers = shown.map(({ column }) => cellText(column.name).toUpperCase());
  const lines = table.rows.map((row) => shown.map(({ index }) => cellText(row.cells[index])));
  if (options.namespaceColumn) {
    headers.unshift("NAMESPACE");
    table.rows.forEach((row, i) => {
      lines[i].unshift(cellText(row.object?.metadata?.namespace ?? ""));
    });
  }
  const widths = headers.map((header, column) => Math.max(header.length, ...lines.map((line) => line[column].length)));
  const join = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join("   ")
      .trimEnd();
  const header = join(headers);
  return `${options.header ? options.header(header) : header}\n${lines.map(join).join("\n")}\n`;
}

export type DataFormat = "yaml" | "json";

/** Objects without metadata.managedFields (as kubectl prints them), lists item by item. */
export function withoutManagedFields(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const object = value as { metadata?: Record<string, unknown>; items?: unknown[] };
  const copy: Record<string, unknown> = { ...object };
  if (object.metadata && "managedFields" in object.metadata) {
    const { managedFields: _dropped, ...metadata } = object.metadata;
    copy.metadata = metadata;
  }
  if (Array.isArray(object.items)) copy.items = object.items.map(withoutManagedFields);
  return copy;
}

export function formatData(value: unknown, format: DataFormat): string {
  return format === "json" ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}
