// Field-level validation errors, modelled on k8s.io/apimachinery/pkg/util/validation/field.
// They are collected by validators and turned into one 422 Invalid Status by errors.invalid().

export type FieldErrorType =
  | "FieldValueRequired"
  | "FieldValueInvalid"
  | "FieldValueForbidden"
  | "FieldValueNotSupported"
  | "FieldValueDuplicate"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueNotFound"
  | "FieldValueTypeInvalid";

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with bracketed indexes and keys: `spec.access[0].verbs`, `metadata.labels[app]`. */
  field: string;
  badValue?: unknown;
  /** Pre-rendered bad value, for the few messages Kubernetes prints specially (e.g. `0x0`). */
  badValueText?: string;
  detail?: string;
}

const typeLabels: Record<FieldErrorType, string> = {
  FieldValueRequired: "Required value",
  FieldValueInvalid: "Invalid value",
  FieldValueForbidden: "Forbidden",
  FieldValueNotSupported: "Unsupported value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueNotFound: "Not found",
  FieldValueTypeInvalid: "Invalid value",
};

/** Types whose message shows the offending value, as Kubernetes does. */
const showsValue = new Set<FieldErrorType>([
  "FieldValueInvalid",
  "FieldValueNotSupported",
  "FieldValueDuplicate",
  "FieldValueNotFound",
  "FieldValueTypeInvalid",
]);

function renderValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined || value === null) return "null";
  if (typeof value === "object") {
    const text = JSON.stringify(value);
    return text.length > 256 ? `${text.slice(0, 253)}...` : text;
  }
  return String(value);
}

/** The message without the field prefix, as it appears in a Status cause. */
export function fieldErrorBody(error: FieldError): string {
  let text = typeLabels[error.type];
  if (showsValue.has(error.type) && (error.badValueText !== undefined || "badValue" in error)) {
    text += `: ${error.badValueText ?? renderValue(error.badValue)}`;
  }
  if (error.detail) text += `: ${error.detail}`;
  return text;
}

/** `field: body`, the form kubectl prints after `*`. */
export function formatFieldError(error: FieldError): string {
  return error.field ? `${error.field}: ${fieldErrorBody(error)}` : fieldErrorBody(error);
}

export const fieldError = {
  required: (field: string, detail = ""): FieldError => ({ type: "FieldValueRequired", field, detail }),
  invalid: (field: string, badValue: unknown, detail = ""): FieldError => ({
    type: "FieldValueInvalid",
    field,
    badValue,
    detail,
  }),
  forbidden: (field: string, detail: string): FieldError => ({ type: "FieldValueForbidden", field, detail }),
  notSupported: (field: string, badValue: unknown, supported: readonly string[]): FieldError => ({
    type: "FieldValueNotSupported",
    field,
    badValue,
    detail: supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}` : "",
  }),
  duplicate: (field: string, badValue: unknown): FieldError => ({ type: "FieldValueDuplicate", field, badValue }),
  tooLong: (field: string, maxLength: number): FieldError => ({
    type: "FieldValueTooLong",
    field,
    detail: `may not be more than ${maxLength} bytes`,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    type: "FieldValueTooMany",
    field,
    detail: `${actual}: must have at most ${max} items`,
  }),
  notFound: (field: string, badValue: unknown): FieldError => ({ type: "FieldValueNotFound", field, badValue }),
  typeInvalid: (field: string, badValue: unknown, detail: string): FieldError => ({
    type: "FieldValueTypeInvalid",
    field,
    badValue,
    detail,
  }),
};

/** Joins a path and a child: `child(spec, "a")` = `spec.a`, `child("spec.x", 0)` = `spec.x[0]`. */
export function childPath(parent: string, child: string | number): string {
  if (typeof child === "number") return `${parent}[${child}]`;
  return parent ? `${parent}.${child}` : child;
}

/** Path to a map entry: `keyPath("metadata.labels", "app")` = `metadata.labels[app]`. */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}
