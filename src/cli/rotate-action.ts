// The shared body of the `platform rotate-*` commands: POST one create-only rotation object (admins only), then
// print its status as a one-row table or as YAML/JSON.

import { API_GROUP_PATH } from "../virtualcluster/lifecycle/platform-client.ts";
import { formatData, renderTable } from "./output.ts";
import { loggedInClient } from "./platform-session.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

export const ROTATE_FORMATS = ["table", "yaml", "json"] as const;
export type RotateFormat = (typeof ROTATE_FORMATS)[number];

export interface RotateActionOptions {
  /** Plural of the rotation resource, e.g. `signingkeyrotations`. */
  resource: string;
  kind: string;
  /** What the spinner says while the platform works. */
  progress: string;
  /** Table columns: header and the status field shown (lists are joined with commas). */
  columns: { header: string; field: string }[];
}

export async function rotate(
  options: RotateActionOptions,
  request: { spec: Record<string, unknown>; output: RotateFormat },
): Promise<void> {
  const client = loggedInClient();
  const body = { apiVersion: "management.platform.sh/v1", kind: options.kind, spec: request.spec };
  const rotation = await withSpinner(options.progress, () =>
    client.request<{ status?: Record<string, unknown> }>("POST", `${API_GROUP_PATH}/${options.resource}`, { body }),
  );
  if (request.output !== "table") {
    process.stdout.write(formatData(rotation, request.output));
    return;
  }
  const status = rotation.status ?? {};
  const cell = (value: unknown) => (Array.isArray(value) ? value.join(",") : value);
  const table = {
    columnDefinitions: options.columns.map((column) => ({ name: column.header })),
    rows: [{ cells: options.columns.map((column) => cell(status[column.field])) }],
  };
  process.stdout.write(renderTable(table, { header: styles(colorEnabled(process.stdout)).bold }));
}
