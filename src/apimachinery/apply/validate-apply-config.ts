// An applied configuration must name each item of its set and map lists once: upstream refuses the patch
// ("failed to create typed patch object") when an item has no key, is null, or is duplicated. Live objects are
// more lenient (duplicates are tolerated there), so only the config goes through this.

import { errors, type StatusError } from "../errors.ts";
import { isPlainObject, type KubeObject } from "../types.ts";
import { formatFieldPath } from "./field-path.ts";
import { fieldOf, ListItemError, listItemElement, type Schema, shapeOf } from "./schema-shape.ts";

/** Recursion follows the config's nesting, which MAX_NESTING_DEPTH bounds (the body was measured). */
function walk(value: unknown, schema: Schema, path: string[], problems: string[]): void {
  const shape = shapeOf(schema, value);
  const where = (text: string) => (path.length > 0 ? `${formatFieldPath(path)}: ${text}` : text);
  if (shape.kind === "list" && shape.listType !== "atomic" && Array.isArray(value)) {
    const seen = new Set<string>();
    for (let i = 0; i < value.length; i++) {
      let element: string;
      try {
        element = listItemElement(shape, value[i]);
      } catch (error) {
        if (!(error instanceof ListItemError)) throw error;
        problems.push(where(`element ${i}: ${error.message}`));
        return;
      }
      if (seen.has(element)) problems.push(where(`duplicate entries for key ${formatFieldPath([element])}`));
      seen.add(element);
      walk(value[i], shape.items, [...path, element], problems);
    }
    return;
  }
  if (shape.kind === "map" && !shape.atomic && isPlainObject(value)) {
    for (const key of Object.keys(value))
      walk(value[key], fieldOf(schema, key).schema, [...path, `f:${key}`], problems);
  }
}

/** A 400 describing what makes `config` unusable for apply, or undefined when it is fine. */
export function applyConfigError(config: KubeObject, schema: Schema): StatusError | undefined {
  const problems: string[] = [];
  walk(config, schema, [], problems);
  if (problems.length === 0) return undefined;
  const detail = problems.length === 1 ? problems[0] : ["errors:", ...problems.map((p) => `  ${p}`)].join("\n");
  const meta = config.metadata ?? {};
  const object = `${meta.namespace ?? ""}/${meta.name ?? ""}; ${config.apiVersion}, Kind=${config.kind}`;
  return errors.badRequest(`failed to create typed patch object (${object}): ${detail}`);
}
