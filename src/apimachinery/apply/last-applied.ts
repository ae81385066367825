// Moving from client-side to server-side apply with kubectl (upstream lastAppliedManager/lastAppliedUpdater):
// when the manager "kubectl" conflicts only on fields that its last-applied-configuration annotation holds with
// the live value, those conflicts are expected (kubectl applied them before, client-side) and the apply is forced.
// Afterwards the annotation, when present, is kept in sync with what kubectl applied server-side.

import { jsonNestingBeyond } from "../../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../../utils/max-nesting-depth.ts";
import { getOwn } from "../json-values.ts";
import { isPlainObject, type JsonMap, type KubeObject } from "../types.ts";
import { compareObjects } from "./compare.ts";
import type { FieldSet } from "./field-set.ts";
import { goJson } from "./go-json.ts";
import type { Schema } from "./schema-shape.ts";
import { toFieldSet } from "./to-field-set.ts";

export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/** Only kubectl's own server-side apply takes over (or updates) the client-side apply state. */
export const LAST_APPLIED_MANAGER = "kubectl";

function lastAppliedText(object: KubeObject | undefined): string | undefined {
  const annotations = object?.metadata?.annotations;
  if (!isPlainObject(annotations)) return undefined;
  const text = getOwn(annotations, LAST_APPLIED_ANNOTATION);
  return typeof text === "string" && text !== "" ? text : undefined;
}

/** Fields whose conflicts client-side apply history explains; undefined when there is no usable annotation. */
export function conflictsAllowedByLastApplied(
  live: KubeObject | undefined,
  schema: Schema,
  apiVersion: string,
): FieldSet | undefined {
  const text = lastAppliedText(live);
  if (text === undefined || !live) return undefined;
  // The annotation is a string in the body, so the body's nesting bound did not measure it.
  if (jsonNestingBeyond(text, MAX_NESTING_DEPTH) !== -1) return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(lastApplied) || lastApplied.apiVersion !== apiVersion) return undefined;
  const comparison = compareObjects(lastApplied, live, schema);
  // Fields that no longer hold the last-applied value were changed since: someone else's now.
  return toFieldSet(lastApplied, schema)
    .difference(comparison.modified)
    .difference(comparison.added)
    .difference(comparison.removed);
}

export function hasLastApplied(object: KubeObject): boolean {
  return lastAppliedText(object) !== undefined;
}

/** The annotation value for an applied config: the config without the annotation, as Go encodes it. */
export function lastAppliedFor(config: JsonMap): string {
  const copy: JsonMap = { ...config };
  if (isPlainObject(config.metadata)) {
    const metadata: JsonMap = { ...config.metadata };
    if (isPlainObject(metadata.annotations)) {
      // Like upstream, an annotation map that held only this annotation stays, empty.
      const annotations: JsonMap = { ...metadata.annotations };
      delete annotations[LAST_APPLIED_ANNOTATION];
      metadata.annotations = annotations;
    }
    copy.metadata = metadata;
  }
  return `${goJson(copy)}\n`;
}
