// The fields of an object a manager would own by writing it: every leaf and list item per the schema, without
// the never-tracked metadata and without the reset fields of this kind of write.

import type { JsonMap } from "../types.ts";
import type { FieldSet } from "./field-set.ts";
import { toFieldSet } from "./to-field-set.ts";
import { type ResetFields, trackedFields } from "./tracked-fields.ts";

export function fieldSetFromObject(
  object: unknown,
  schema: JsonMap,
  options?: { resetFields?: ResetFields },
): FieldSet {
  return trackedFields(toFieldSet(object, schema), options?.resetFields);
}
