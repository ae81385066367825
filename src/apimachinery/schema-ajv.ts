// The one ajv instance behind resource schemas, configured for the Kubernetes dialect of OpenAPI v3 schemas:
// `nullable`, the x-kubernetes-* extensions, and the formats the API server knows.

import { Ajv, type SchemaValidateFunction, type ValidateFunction } from "ajv";
import { cloneJson, jsonEqual, setOwn } from "./json-values.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

/** RFC 3339 date-time as Go's time.Parse(time.RFC3339) accepts it. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

// Server-set timestamps repeat within a second (creationTimestamp, managedFields time): the last accepted text
// answers without the regular expression.
let lastDateTime = "";

export function isDateTime(value: string): boolean {
  if (value === lastDateTime) return true;
  const ok = checkDateTime(value);
  if (ok) lastDateTime = value;
  return ok;
}

function checkDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[8] === undefined || (Number(m[8]) <= 23 && Number(m[9]) <= 59);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetOk
  );
}

/**
 * The integers each integer format takes: int32 as Go holds it, int64 only as far as a JavaScript number holds
 * integers exactly (beyond 2^53 a value silently becomes another). `type: integer` without a format is int64, and an
 * int-or-string's number is int32 (Go's IntOrString), so every integer field of every schema is checked here.
 */
export const INTEGER_RANGES: Readonly<Record<"int32" | "int64", readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

function inRange(format: "int32" | "int64"): (value: number) => boolean {
  const [min, max] = INTEGER_RANGES[format];
  return (value) => value >= min && value <= max;
}

/** Formats used by Kubernetes schemas that carry no check here (floating point widths, opaque strings). */
const annotationFormats = ["float", "double", "byte", "binary", "password", "int-or-string", "quantity"];

/** Keywords ajv must accept without checking anything: they steer pruning, apply and OpenAPI, not validation. */
const annotationKeywords = [
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-validations",
  "x-kubernetes-group-version-kind",
  "x-kubernetes-patch-strategy",
  "x-kubernetes-patch-merge-key",
];

const int32 = inRange("int32");
const intOrString: SchemaValidateFunction = (enabled: unknown, data: unknown) =>
  enabled !== true || typeof data === "string" || (Number.isInteger(data) && int32(data as number));

/** Item positions repeating an earlier item (set) or an earlier item's map keys (map). */
export interface ListDuplicate {
  index: number;
  value: unknown;
}

const listType: SchemaValidateFunction = function listTypeCheck(
  this: unknown,
  kind: unknown,
  data: unknown,
  parentSchema?: JsonMap,
): boolean {
  if (!Array.isArray(data) || (kind !== "set" && kind !== "map")) return true;
  const keys =
    kind === "map" && Array.isArray(parentSchema?.["x-kubernetes-list-map-keys"])
      ? (parentSchema["x-kubernetes-list-map-keys"] as string[])
      : [];
  const identities: unknown[] = [];
  const duplicates: ListDuplicate[] = [];
  data.forEach((item, index) => {
    let identity: unknown = item;
    if (kind === "map") {
      if (!isPlainObject(item)) return;
      const picked: JsonMap = {};
      for (const key of keys) if (Object.hasOwn(item, key)) picked[key] = item[key];
      identity = picked;
    }
    if (identities.some((seen) => jsonEqual(seen, identity))) duplicates.push({ index, value: identity });
    else identities.push(identity);
  });
  if (duplicates.length === 0) return true;
  listType.errors = [{ keyword: "x-kubernetes-list-type", message: "duplicate entries", params: { duplicates } }];
  return false;
};

function createAjv(): Ajv {
  const formats: Record<
    string,
    | true
    | { type: "string"; validate: (value: string) => boolean }
    | { type: "number"; validate: (n: number) => boolean }
  > = {
    "date-time": { type: "string", validate: isDateTime },
    int32: { type: "number", validate: int32 },
    int64: { type: "number", validate: inRange("int64") },
  };
  for (const name of annotationFormats) formats[name] = true;
  // strict off: resource schemas may carry OpenAPI annotations (example, externalDocs) ajv does not know. No
  // optimizing pass over the generated code: it makes a compile 40 % dearer (the Config's schema 200 ms instead of
  // 120) and validation no faster.
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    logger: false,
    formats,
    code: { optimize: false },
  });
  ajv.addVocabulary(annotationKeywords);
  ajv.addKeyword({
    keyword: "x-kubernetes-int-or-string",
    schemaType: "boolean",
    validate: intOrString,
    errors: false,
  });
  ajv.addKeyword({
    keyword: "x-kubernetes-list-type",
    schemaType: "string",
    type: "array",
    validate: listType,
    errors: true,
  });
  return ajv;
}

const ajv = createAjv();

const schemaMaps = new Set(["properties", "patternProperties", "definitions", "$defs"]);
const schemaLists = new Set(["allOf", "anyOf", "oneOf"]);
const schemaValues = new Set(["additionalProperties", "items", "not"]);

/**
 * Rewrites what ajv reads differently from Kubernetes: nullable without type, null with an enum, and an integer
 * without a format (int64). An int-or-string's alternatives stay as they are: its own keyword checks the number.
 */
function forAjv(schema: unknown, inIntOrString = false): unknown {
  if (!isPlainObject(schema)) return cloneJson(schema);
  const copy: JsonMap = {};
  const intOrString = schema["x-kubernetes-int-or-string"] === true;
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (schemaMaps.has(key) && isPlainObject(value)) {
      const map: JsonMap = {};
      for (const name of Object.keys(value)) setOwn(map, name, forAjv(value[name]));
      copy[key] = map;
    } else if (schemaLists.has(key) && Array.isArray(value)) {
      copy[key] = value.map((item) => forAjv(item, intOrString));
    } else if (schemaValues.has(key)) {
      copy[key] = Array.isArray(value) ? value.map((item) => forAjv(item)) : forAjv(value);
    } else {
      setOwn(copy, key, cloneJson(value));
    }
  }
  if (copy.nullable !== undefined && copy.type === undefined) delete copy.nullable;
  if (copy.nullable === true && Array.isArray(copy.enum) && !copy.enum.includes(null)) copy.enum = [...copy.enum, null];
  if (copy.type === "integer" && copy.format === undefined && !inIntOrString) copy.format = "int64";
  return copy;
}

/** Compiles a schema. Callers cache the result; ajv's own cache is cleared so repeated compiles do not pile up. */
export function compileWithAjv(schema: JsonMap): ValidateFunction {
  const prepared = forAjv(schema) as JsonMap;
  const validate = ajv.compile(prepared);
  ajv.removeSchema(prepared);
  return validate;
}
