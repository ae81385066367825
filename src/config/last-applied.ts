// kubectl apply (client side) copies the whole object, spec.raw included, into the last-applied-configuration
// annotation. That copy is kept with its secrets redacted, so no read (and no later diff) shows them.

import { isPlainObject, type KubeObject } from "../apimachinery/types.ts";
import { jsonNestingBeyond } from "../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";
import { redactConfigValue, redactRawConfig } from "./redact.ts";

export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Redacts the annotation of `object` in place, if it has one. */
export function redactLastApplied(object: KubeObject): void {
  const annotations = object.metadata.annotations;
  const text = annotations?.[LAST_APPLIED];
  if (!annotations || typeof text !== "string") return;
  try {
    // A string in the body: the body's nesting bound did not measure it, and redaction walks it.
    if (jsonNestingBeyond(text, MAX_NESTING_DEPTH) !== -1) throw new Error("nested too deeply");
    const applied = JSON.parse(text) as unknown;
    if (!isPlainObject(applied)) throw new Error("not an object");
    const spec = applied.spec;
    if (isPlainObject(spec) && typeof spec.raw === "string") spec.raw = redactRawConfig(spec.raw);
    if (applied.status !== undefined) applied.status = redactConfigValue(applied.status);
    annotations[LAST_APPLIED] = JSON.stringify(applied);
  } catch {
    delete annotations[LAST_APPLIED]; // unreadable: cannot be shown safely
  }
}
