import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "./constants.ts";
import type { LabelKeyTranslator } from "./label-keys.ts";

export type LabelMap = Record<string, string>;

/** Sets a key as plain data, so a key such as `__proto__` never touches a prototype. */
export function putLabel(labels: LabelMap, key: string, value: string): void {
  Object.defineProperty(labels, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Labels of the host copy of a virtual object: reserved keys rewritten, everything else copied, plus the
 * managed-by and (for namespaced objects) namespace markers. A virtual label that already looks like a rewritten
 * key is dropped so a virtual object cannot forge one.
 */
export function hostLabels(
  labels: LabelMap | undefined,
  keys: LabelKeyTranslator,
  markers: { virtualClusterName: string; virtualNamespace?: string },
): LabelMap {
  const result: LabelMap = {};
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (keys.isRewritten(key)) continue;
    putLabel(result, keys.host(key), value);
  }
  putLabel(result, MANAGED_BY_LABEL, markers.virtualClusterName);
  if (markers.virtualNamespace) putLabel(result, NAMESPACE_LABEL, markers.virtualNamespace);
  return result;
}

/** Labels of the virtual object from its host copy: markers dropped, reserved keys restored. */
export function virtualLabels(labels: LabelMap | undefined, keys: LabelKeyTranslator): LabelMap {
  const result: LabelMap = {};
  for (const [key, value] of Object.entries(labels ?? {})) {
    const virtualKey = keys.virtual(key);
    if (virtualKey !== undefined) putLabel(result, virtualKey, value);
  }
  return result;
}
