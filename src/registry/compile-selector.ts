// Label and field selectors as the registry applies them to stored objects: parsed and checked once per request,
// into a predicate that a list or watch then calls per object or event.

import { errors } from "../apimachinery/errors.ts";
import { type FieldReader, parseFieldSelector } from "../apimachinery/field-selector.ts";
import { parseLabelSelector } from "../apimachinery/label-selector.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import type { ResourceDefinition } from "./types.ts";

export type ObjectPredicate = (object: KubeObject) => boolean;

export interface CompiledSelector {
  readonly matches: ObjectPredicate;
  /** No selector, or empty ones: every object matches, so callers may skip decoding for it. */
  readonly matchesAll: boolean;
  /** The name `metadata.name=x` pins the selection to: one key, which a list can read directly. */
  readonly name: string | undefined;
}

const everything: CompiledSelector = { matches: () => true, matchesAll: true, name: undefined };

const readName: FieldReader<KubeObject> = (object) => object.metadata.name;
const readNamespace: FieldReader<KubeObject> = (object) => object.metadata.namespace;

/** How `field` is read for `definition`'s objects; a field it does not offer is a 400, as upstream. */
function fieldReader(definition: ResourceDefinition, field: string): FieldReader<KubeObject> {
  if (field === "metadata.name") return readName;
  if (field === "metadata.namespace") return readNamespace;
  const extra = definition.selectableFields;
  if (extra && Object.hasOwn(extra, field)) return extra[field];
  throw errors.badRequest(`field label not supported: ${field}`);
}

/**
 * Parses a list's or watch's selectors once; bad selectors are 400s with upstream's messages. `visible` (a view's
 * narrowing, ListOptions.visible) is one more condition every object must meet.
 */
export function compileSelector(
  definition: ResourceDefinition,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
  visible?: ObjectPredicate,
): CompiledSelector {
  const selector = compileClientSelector(definition, labelSelector, fieldSelector);
  if (!visible) return selector;
  if (selector.matchesAll) return { matches: visible, matchesAll: false, name: selector.name };
  return { matches: (object) => visible(object) && selector.matches(object), matchesAll: false, name: selector.name };
}

function compileClientSelector(
  definition: ResourceDefinition,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): CompiledSelector {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : undefined;
  const fields = fieldSelector ? parseFieldSelector(fieldSelector) : undefined;
  const byFields = fields?.compile((field) => fieldReader(definition, field));
  const name = fields?.requirements.find((r) => r.field === "metadata.name" && r.operator === "=")?.value;
  const useLabels = labels && !labels.isEmpty() ? labels.matches : undefined;
  const useFields = fields && !fields.isEmpty() ? byFields : undefined;
  if (useLabels && useFields) {
    return { matches: (object) => useLabels(object.metadata.labels) && useFields(object), matchesAll: false, name };
  }
  if (useLabels) return { matches: (object) => useLabels(object.metadata.labels), matchesAll: false, name };
  if (useFields) return { matches: useFields, matchesAll: false, name };
  return everything;
}
