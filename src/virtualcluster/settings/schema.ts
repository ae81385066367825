import { type FieldError, fieldError } from "../../apimachinery/field-errors.ts";

// A small declarative schema for virtualcluster.yaml: types, defaults, unknown-key detection, errors with field
// paths. Deliberately tiny so new settings are one line each (issue 7 adds its sections to settings-schema.ts).

export type Schema = ObjectSchema | StringSchema | BooleanSchema | ArraySchema | RawSchema;

export interface ObjectSchema {
  type: "object";
  fields: Record<string, Schema>;
  /** "always": filled in with defaults when absent; "optional": only exists when the user writes it. */
  presence: "always" | "optional";
}
export interface StringSchema {
  type: "string";
  default?: string;
  enum?: readonly string[];
}
export interface BooleanSchema {
  type: "boolean";
  default?: boolean;
}
export interface ArraySchema {
  type: "array";
  items: Schema;
  /** Arrays default to empty. */
}

/** A mapping kept as written, checked by its own validator (the audit section reuses the platform's). */
export interface RawSchema {
  type: "raw";
}

export const object = (
  fields: Record<string, Schema>,
  presence: ObjectSchema["presence"] = "always",
): ObjectSchema => ({
  type: "object",
  fields,
  presence,
});
export const string = (options: Omit<StringSchema, "type"> = {}): StringSchema => ({ type: "string", ...options });
export const boolean = (defaultValue?: boolean): BooleanSchema => ({ type: "boolean", default: defaultValue });
export const array = (items: Schema): ArraySchema => ({ type: "array", items });
export const raw = (): RawSchema => ({ type: "raw" });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

const put = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });

/**
 * Checks `value` against `schema` and returns it with defaults filled in. Problems (wrong types, unknown keys,
 * values outside an enum) are appended to `errors` with their field paths; a wrong value is replaced by its default.
 * null counts as absent, as in YAML (`patches:` with nothing after it).
 */
export function applySchema(schema: Schema, value: unknown, path: string, errors: FieldError[]): unknown {
  const absent = value === undefined || value === null;
  switch (schema.type) {
    case "raw":
      if (absent) return undefined;
      if (!isObject(value)) {
        errors.push(fieldError.typeInvalid(path, value, "must be an object"));
        return undefined;
      }
      return value;
    case "string":
      if (absent) return schema.default;
      if (typeof value !== "string") {
        errors.push(fieldError.typeInvalid(path, value, "must be a string"));
        return schema.default;
      }
      if (schema.enum && !schema.enum.includes(value)) errors.push(fieldError.notSupported(path, value, schema.enum));
      return value;
    case "boolean":
      if (absent) return schema.default;
      if (typeof value !== "boolean") {
        errors.push(fieldError.typeInvalid(path, value, "must be a boolean"));
        return schema.default;
      }
      return value;
    case "array": {
      if (absent) return [];
      if (!Array.isArray(value)) {
        errors.push(fieldError.typeInvalid(path, value, "must be a list"));
        return [];
      }
      return value.map((item, index) => applySchema(schema.items, item, `${path}[${index}]`, errors));
    }
    case "object": {
      if (absent && schema.presence === "optional") return undefined;
      if (!absent && !isObject(value)) {
        errors.push(fieldError.typeInvalid(path || "<root>", value, "must be an object"));
        return schema.presence === "optional" ? undefined : applySchema(schema, {}, path, errors);
      }
      const input = (value ?? {}) as Record<string, unknown>;
      const result: Record<string, unknown> = {};
      for (const key of Object.keys(input)) {
        if (!Object.hasOwn(schema.fields, key)) {
          const known = Object.keys(schema.fields);
          const detail = known.length ? `unknown field; known fields: ${known.join(", ")}` : "unknown field";
          errors.push(fieldError.forbidden(join(path, key), detail));
        }
      }
      for (const [key, field] of Object.entries(schema.fields)) {
        const child = applySchema(field, input[key], join(path, key), errors);
        if (child !== undefined) put(result, key, child);
      }
      return result;
    }
  }
}
