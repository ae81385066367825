// Turns ajv errors into Kubernetes field errors, worded as the API server words custom resource validation
// (kube-openapi): `spec.ttl: Invalid value: "string": spec.ttl in body must be of type integer: "string"`.

import type { ErrorObject } from "ajv";
import { childPath, type FieldError, fieldError, keyPath } from "./field-errors.ts";
import { getOwn, jsonTypeName } from "./json-values.ts";
import { INTEGER_RANGES, type ListDuplicate } from "./schema-ajv.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

/**
 * The Kubernetes path of an ajv instancePath: declared properties as `.name`, map entries as `[key]`, indexes
 * as `[0]`. Walks the schema beside the data to tell a property from a map key.
 */
function kubePath(rootSchema: JsonMap, data: unknown, instancePath: string): { path: string; schema: unknown } {
  let path = "";
  let schema: unknown = rootSchema;
  let node = data;
  if (instancePath === "") return { path, schema };
  for (const raw of instancePath.slice(1).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    const current = isPlainObject(schema) ? schema : {};
    if (Array.isArray(node)) {
      const index = Number(segment);
      path = childPath(path, index);
      node = node[index];
      schema = Array.isArray(current.items) ? current.items[index] : current.items;
      continue;
    }
    const properties = isPlainObject(current.properties) ? current.properties : undefined;
    const declared = properties !== undefined && Object.hasOwn(properties, segment);
    path = declared ? childPath(path, segment) : keyPath(path, segment);
    node = isPlainObject(node) ? getOwn(node, segment) : undefined;
    schema = declared ? properties[segment] : current.additionalProperties;
  }
  return { path, schema };
}

/** kube-openapi names the field in the detail: `spec.ttl in body ...`. */
function inBody(path: string, text: string): string {
  return `${path} in body ${text}`;
}

function typeNames(schema: unknown): string {
  const type = isPlainObject(schema) ? schema.type : undefined;
  return Array.isArray(type) ? type.join(",") : String(type);
}

function renderSupported(values: unknown): string[] {
  if (!Array.isArray(values)) return [];
  return values.filter((v) => v !== null).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
}

/** An integer beyond its format, worded as kube-openapi words minimum and maximum. */
function outOfRange(path: string, value: number, format: keyof typeof INTEGER_RANGES): FieldError {
  const [min, max] = INTEGER_RANGES[format];
  const exact = format === "int64" ? ", the largest integers held exactly" : "";
  const bound = value > max ? `less than or equal to ${max}` : `greater than or equal to ${min}`;
  return fieldError.invalid(path, value, inBody(path, `should be ${bound} (${format}${exact})`));
}

function convert(error: ErrorObject, rootSchema: JsonMap, data: unknown): FieldError[] {
  const { path } = kubePath(rootSchema, data, error.instancePath);
  const params = error.params as JsonMap;
  const value = error.data;
  const limit = params.limit;
  switch (error.keyword) {
    case "required":
      return [fieldError.required(childPath(path, String(params.missingProperty)))];
    case "type": {
      const actual = jsonTypeName(value);
      return [
        fieldError.typeInvalid(
          path,
          actual,
          inBody(path, `must be of type ${typeNames(error.parentSchema)}: "${actual}"`),
        ),
      ];
    }
    case "x-kubernetes-int-or-string": {
      if (Number.isInteger(value)) return [outOfRange(path, value as number, "int32")];
      const actual = jsonTypeName(value);
      return [fieldError.typeInvalid(path, actual, inBody(path, `must be of type integer or string: "${actual}"`))];
    }
    case "enum":
      return [fieldError.notSupported(path, value, renderSupported(error.schema))];
    case "maxLength":
      return [fieldError.tooLong(path, Number(limit))];
    case "maxItems":
      return [fieldError.tooMany(path, Array.isArray(value) ? value.length : 0, Number(limit))];
    case "x-kubernetes-list-type":
      return ((params.duplicates ?? []) as ListDuplicate[]).map((d) =>
        fieldError.duplicate(childPath(path, d.index), d.value),
      );
    case "minimum":
      return [fieldError.invalid(path, value, inBody(path, `should be greater than or equal to ${limit}`))];
    case "exclusiveMinimum":
      return [fieldError.invalid(path, value, inBody(path, `should be greater than ${limit}`))];
    case "maximum":
      return [fieldError.invalid(path, value, inBody(path, `should be less than or equal to ${limit}`))];
    case "exclusiveMaximum":
      return [fieldError.invalid(path, value, inBody(path, `should be less than ${limit}`))];
    case "minLength":
      return [fieldError.invalid(path, value, inBody(path, `should be at least ${limit} chars long`))];
    case "minItems":
      return [fieldError.invalid(path, value, inBody(path, `should have at least ${limit} items`))];
    case "pattern":
      return [fieldError.invalid(path, value, inBody(path, `should match '${params.pattern}'`))];
    case "format":
      if (typeof value === "number" && Object.hasOwn(INTEGER_RANGES, String(params.format))) {
        return [outOfRange(path, value, params.format as keyof typeof INTEGER_RANGES)];
      }
      return [
        fieldError.invalid(path, value, inBody(path, `must be of type ${params.format}: ${JSON.stringify(value)}`)),
      ];
    case "multipleOf":
      return [fieldError.invalid(path, value, inBody(path, `should be a multiple of ${params.multipleOf}`))];
    case "uniqueItems":
      return [fieldError.invalid(path, value, inBody(path, "shouldn't contain duplicates"))];
    case "minProperties":
      return [fieldError.invalid(path, value, inBody(path, `should have at least ${limit} properties`))];
    case "maxProperties":
      return [fieldError.invalid(path, value, inBody(path, `should have at most ${limit} properties`))];
    case "additionalProperties": {
      const field = childPath(path, String(params.additionalProperty));
      const extra = isPlainObject(value) ? getOwn(value, String(params.additionalProperty)) : undefined;
      return [fieldError.invalid(field, extra, inBody(field, "is a forbidden property"))];
    }
    default:
      return [fieldError.invalid(path, value, inBody(path, error.message ?? `fails ${error.keyword}`))];
  }
}

const typeKeywords = new Set(["type", "x-kubernetes-int-or-string"]);

/**
 * All ajv errors as field errors, in ajv's order, without exact repeats. A value of the wrong type gets only its
 * type error, as kube-openapi stops there (no enum or pattern noise about a null or a number).
 */
export function toFieldErrors(ajvErrors: readonly ErrorObject[], rootSchema: JsonMap, data: unknown): FieldError[] {
  const wrongType = new Set(ajvErrors.filter((e) => typeKeywords.has(e.keyword)).map((e) => e.instancePath));
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of ajvErrors) {
    if (wrongType.has(error.instancePath) && !typeKeywords.has(error.keyword)) continue;
    for (const fe of convert(error, rootSchema, data)) {
      const id = JSON.stringify([fe.type, fe.field, fe.detail]);
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(fe);
    }
  }
  return out;
}
