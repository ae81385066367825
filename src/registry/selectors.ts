// Label and field selectors as the registry applies them to stored objects.

import { decodeContinueToken } from "../apimachinery/continue-token.ts";
import { errors } from "../apimachinery/errors.ts";
import { parseFieldSelector } from "../apimachinery/field-selector.ts";
import { parseLabelSelector } from "../apimachinery/label-selector.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import type { ResourceDefinition } from "./types.ts";

export type ObjectPredicate = (object: KubeObject) => boolean;

/** Builds the predicate for a list or watch; unsupported field labels are a 400, as upstream. */
export function selectionPredicate(
  definition: ResourceDefinition,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ObjectPredicate | undefined {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : undefined;
  const fields = fieldSelector ? parseFieldSelector(fieldSelector) : undefined;
  const extra = definition.selectableFields ?? {};
  for (const requirement of fields?.requirements ?? []) {
    const supported = requirement.field === "metadata.name" || requirement.field === "metadata.namespace";
    if (!supported && !(requirement.field in extra)) {
      throw errors.badRequest(`field label not supported: ${requirement.field}`);
    }
  }
  const useLabels = labels && !labels.isEmpty() ? labels : undefined;
  const useFields = fields && !fields.isEmpty() ? fields : undefined;
  if (!useLabels && !useFields) return undefined;
  return (object) => {
    if (useLabels && !useLabels.matches(object.metadata.labels)) return false;
    if (useFields) {
      const values: Record<string, string | undefined> = {
        "metadata.name": object.metadata.name,
        "metadata.namespace": object.metadata.namespace ?? "",
      };
      for (const requirement of useFields.requirements) {
        const field = requirement.field;
        if (!(field in values)) values[field] = extra[field]?.(object) ?? "";
      }
      if (!useFields.matches(values)) return false;
    }
    return true;
  };
}

/** `metadata.name=x` pins the list to one key, so it can be read directly. */
export function singleNameOf(fieldSelector: string | undefined): string | undefined {
  if (!fieldSelector) return undefined;
  const requirements = parseFieldSelector(fieldSelector).requirements;
  const byName = requirements.find((r) => r.field === "metadata.name" && r.operator === "=");
  return byName?.value;
}

/** Parses a resourceVersion parameter: a non-negative integer, or a 400. */
export function parseResourceVersion(value: string): number {
  if (!/^\d{1,16}$/.test(value)) {
    throw errors.badRequest(`invalid resource version "${value}": must be a non-negative integer`);
  }
  return Number(value);
}

export { decodeContinueToken };
