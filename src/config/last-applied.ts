// kubectl apply (client side) copies the whole object, spec.raw included, into the last-applied-configuration
// annotation. That copy is kept with its secrets redacted, so no read (and no later diff) shows them.

import { isPlainObject, type KubeObject } from "../apimachinery/types.ts";
import { redactConfigValue, redactRawConfig } from "./redact.ts";

export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Redacts the annotation of `object` in place, if it has one. */
export function redactLastApplied(object: KubeObject): void {
  const annotations = object.metadata.annotations;
  const text = annotations?.[LAST_APPLIED];
  if (!annotations || typeof text !== "string") return;
  try {
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
