// Query parameters -> the registry's option types, validated as apiserver does: unparsable values are 400
// BadRequest; well-formed but disallowed combinations are 422 Invalid on `<Kind>Options.meta.k8s.io ""`
// (the wording kubectl shows, e.g. `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: ...`).

import { parse } from "node:querystring";
import { errors } from "../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../apimachinery/field-errors.ts";
import type {
  FieldValidation,
  ListOptions,
  PatchOptions,
  PatchType,
  WatchOptions,
  WriteOptions,
} from "../registry/types.ts";

/** A parsed query string (parseQueryString): repeated keys give arrays. */
export type Query = Record<string, string | string[] | undefined>;

/**
 * A request's query string (without "?") as Go's url.ParseQuery reads it: "+" is a space, a repeated key collects
 * its values in order. The one parser of both ways in (fastify's routerOptions and the resource pipeline).
 */
export function parseQueryString(text: string): Query {
  return text ? (parse(text, undefined, undefined, { maxKeys: 0 }) as Query) : {};
}

export type IncludeObject = "None" | "Metadata" | "Object";

const FIELD_MANAGER_MAX_LENGTH = 128;

/** First value of a parameter, as Go's url.Values.Get. */
export function queryValue(query: Query, key: string): string | undefined {
  const value = query[key];
  return Array.isArray(value) ? value[0] : value;
}

function queryValues(query: Query, key: string): string[] {
  const value = query[key];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** strconv.ParseBool. Absent -> undefined; an empty value counts as true (`?watch`). */
function boolParam(query: Query, key: string): boolean | undefined {
  const value = queryValue(query, key);
  if (value === undefined) return undefined;
  switch (value) {
    case "":
    case "1":
    case "t":
    case "T":
    case "true":
    case "TRUE":
    case "True":
      return true;
    case "0":
    case "f":
    case "F":
    case "false":
    case "FALSE":
    case "False":
      return false;
    default:
      throw errors.badRequest(`invalid boolean value for query parameter ${key}: ${JSON.stringify(value)}`);
  }
}

function intParam(query: Query, key: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
  const value = queryValue(query, key);
  if (value === undefined || value === "") return undefined;
  if (!/^[-+]?\d+$/.test(value)) {
    throw errors.badRequest(`invalid integer value for query parameter ${key}: ${JSON.stringify(value)}`);
  }
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < min) {
    const bound = min === 0 ? "a non-negative integer" : "an integer in range";
    throw errors.badRequest(`invalid value for query parameter ${key}: ${JSON.stringify(value)}: must be ${bound}`);
  }
  return parsed;
}

function optionsInvalid(kind: string, fieldErrors: FieldError[]): void {
  if (fieldErrors.length) throw errors.invalid({ group: "meta.k8s.io", kind }, "", fieldErrors);
}

function stringParam(query: Query, key: string): string | undefined {
  const value = queryValue(query, key);
  return value === "" ? undefined : value;
}

/** `pretty=true` indents JSON. Unparsable values are ignored, as upstream does. */
export function parsePretty(query: Query): boolean {
  const value = queryValue(query, "pretty");
  return value === "" || value === "1" || value === "true" || value === "True" || value === "TRUE" || value === "t";
}

/** Table `includeObject`: what each row carries (default Metadata: a PartialObjectMetadata). */
export function parseIncludeObject(query: Query): IncludeObject {
  const value = queryValue(query, "includeObject");
  if (value === undefined || value === "") return "Metadata";
  if (value === "None" || value === "Metadata" || value === "Object") return value;
  throw errors.badRequest(`unrecognized includeObject value: ${JSON.stringify(value)}`);
}

/** Validates `dryRun` values (only "All" is defined) and returns whether the request is a dry run. */
export function dryRunFrom(values: string[], path = "dryRun"): { dryRun: boolean; errors: FieldError[] } {
  if (values.length === 0) return { dryRun: false, errors: [] };
  if (values.every((v) => v === "All")) return { dryRun: true, errors: [] };
  const rendered = `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`;
  return {
    dryRun: false,
    errors: [{ ...fieldError.notSupported(path, values, ["All"]), badValueText: rendered }],
  };
}

function listOrWatch(query: Query, namespace: string | undefined): ListOptions {
  const options: ListOptions = {};
  if (namespace) options.namespace = namespace;
  const labelSelector = stringParam(query, "labelSelector");
  if (labelSelector !== undefined) options.labelSelector = labelSelector;
  const fieldSelector = stringParam(query, "fieldSelector");
  if (fieldSelector !== undefined) options.fieldSelector = fieldSelector;
  const limit = intParam(query, "limit", 0);
  if (limit !== undefined && limit > 0) options.limit = limit;
  const cont = stringParam(query, "continue");
  if (cont !== undefined) options.continue = cont;
  const resourceVersion = stringParam(query, "resourceVersion");
  if (resourceVersion !== undefined) options.resourceVersion = resourceVersion;
  return options;
}

/** Options of a LIST (and of deletecollection's selection). */
export function parseListOptions(query: Query, namespace: string | undefined): ListOptions {
  const options = listOrWatch(query, namespace);
  const problems: FieldError[] = [];
  const match = stringParam(query, "resourceVersionMatch");
  if (match !== undefined) {
    if (options.resourceVersion === undefined) {
      problems.push(
        fieldError.forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
      );
    }
    if (options.continue !== undefined) {
      problems.push(
        fieldError.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"),
      );
    }
    if (match === "Exact" || match === "NotOlderThan") {
      options.resourceVersionMatch = match;
      if (match === "Exact" && options.resourceVersion === "0") {
        problems.push(
          fieldError.forbidden(
            "resourceVersionMatch",
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
          ),
        );
      }
    } else {
      problems.push(fieldError.notSupported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]));
    }
  }
  if (boolParam(query, "sendInitialEvents") !== undefined) {
    problems.push(fieldError.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  }
  optionsInvalid("ListOptions", problems);
  return options;
}

/** Options of a WATCH. `name` (legacy /watch/.../name form) narrows to one object by field selector. */
export function parseWatchOptions(query: Query, namespace: string | undefined, name = ""): WatchOptions {
  const options: WatchOptions = listOrWatch(query, namespace);
  delete options.limit;
  if (name) {
    const byName = `metadata.name=${name}`;
    options.fieldSelector = options.fieldSelector ? `${options.fieldSelector},${byName}` : byName;
  }
  const problems: FieldError[] = [];
  const sendInitialEvents = boolParam(query, "sendInitialEvents");
  const match = stringParam(query, "resourceVersionMatch");
  if (sendInitialEvents !== undefined) {
    options.sendInitialEvents = sendInitialEvents;
    if (match !== "NotOlderThan") {
      problems.push(
        fieldError.forbidden(
          "resourceVersionMatch",
          "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
      );
    }
  }
  if (match !== undefined) {
    if (sendInitialEvents === undefined) {
      problems.push(
        fieldError.forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
      );
    }
    if (match === "NotOlderThan") options.resourceVersionMatch = match;
    else problems.push(fieldError.notSupported("resourceVersionMatch", match, ["NotOlderThan"]));
    if (options.continue !== undefined) {
      problems.push(
        fieldError.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"),
      );
    }
  }
  optionsInvalid("ListOptions", problems);
  const bookmarks = boolParam(query, "allowWatchBookmarks");
  if (bookmarks !== undefined) options.allowWatchBookmarks = bookmarks;
  const timeoutSeconds = intParam(query, "timeoutSeconds", 0);
  if (timeoutSeconds !== undefined) options.timeoutSeconds = timeoutSeconds;
  return options;
}

function fieldManagerErrors(fieldManager: string | undefined): FieldError[] {
  if (fieldManager === undefined) return [];
  if (fieldManager.length > FIELD_MANAGER_MAX_LENGTH)
    return [fieldError.tooLong("fieldManager", FIELD_MANAGER_MAX_LENGTH)];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(fieldManager)) {
    return [fieldError.invalid("fieldManager", fieldManager, "must only contain printable characters")];
  }
  return [];
}

function writeOptions(query: Query, problems: FieldError[]): WriteOptions {
  const options: WriteOptions = {};
  const dryRun = dryRunFrom(queryValues(query, "dryRun"));
  problems.push(...dryRun.errors);
  if (dryRun.dryRun) options.dryRun = true;
  const fieldManager = stringParam(query, "fieldManager");
  problems.push(...fieldManagerErrors(fieldManager));
  if (fieldManager !== undefined) options.fieldManager = fieldManager;
  const validation = queryValue(query, "fieldValidation") ?? "";
  if (validation === "Strict" || validation === "Warn" || validation === "Ignore") {
    options.fieldValidation = validation satisfies FieldValidation;
  } else if (validation === "") {
    // Upstream's default when the client sends none.
    options.fieldValidation = "Warn";
  } else {
    problems.push(fieldError.notSupported("fieldValidation", validation, ["", "Ignore", "Strict", "Warn"]));
  }
  return options;
}

/** Options of a create (POST) or update (PUT). */
export function parseWriteOptions(query: Query, kind: "CreateOptions" | "UpdateOptions"): WriteOptions {
  const problems: FieldError[] = [];
  const options = writeOptions(query, problems);
  optionsInvalid(kind, problems);
  return options;
}

/** Options of a PATCH: fieldManager is required for apply, force allowed only for apply. */
export function parsePatchOptions(query: Query, type: PatchType): PatchOptions {
  const problems: FieldError[] = [];
  const force = boolParam(query, "force");
  const options: PatchOptions = writeOptions(query, problems);
  if (type === "apply") {
    if (options.fieldManager === undefined)
      problems.unshift(fieldError.required("fieldManager", "is required for apply patch"));
    if (force !== undefined) options.force = force;
  } else if (force !== undefined) {
    problems.unshift(fieldError.forbidden("force", "may not be specified for non-apply patch"));
  }
  optionsInvalid("PatchOptions", problems);
  return options;
}
