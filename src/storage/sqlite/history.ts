// Reads past writes back from the log as watch events, for watchers that start behind the newest revision.
// The previous version comes from the row a write superseded: compaction only removes rows superseded at or before
// the compacted revision, so for every write a watcher may still read, that row is still there.

import { prefixEnd } from "../prefix-end.ts";
import type { StoredRecord, WatchEvent } from "../types.ts";
import type { Statements } from "./statements.ts";

type HistoryRow = [number, string, number, number, number, number, string | null, string | null, number | null];

/** Up to `limit` events with revision > `afterRevision` for keys under `prefix`, in revision order. */
export function readHistory(
  statements: Statements,
  prefix: string,
  afterRevision: number,
  limit: number,
): WatchEvent[] {
  const rows = statements.history.all(afterRevision, prefix, prefixEnd(prefix), limit) as unknown as HistoryRow[];
  const events: WatchEvent[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [revision, key, created, deleted, createRevision, prevRevision, value, prevValue, prevCreate] = rows[i];
    if (created === 1) {
      events[i] = { type: "create", record: { key, value: value ?? "", revision, createRevision } };
      continue;
    }
    const previous: StoredRecord = {
      key,
      value: prevValue ?? "",
      revision: prevRevision,
      createRevision: prevCreate ?? createRevision,
    };
    events[i] =
      deleted === 1
        ? { type: "delete", record: { key, value: previous.value, revision, createRevision }, previous }
        : { type: "update", record: { key, value: value ?? "", revision, createRevision }, previous };
  }
  return events;
}
