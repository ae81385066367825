// Request body decoding (JSON, YAML and the patch media types) and response encoding (JSON or YAML).
// Errors are Status errors a client can act on: 415 for a media type we do not take, 400 saying where a body broke.

import { isUtf8 } from "node:buffer";
import { stringify as stringifyYaml, YAMLParseError } from "yaml";
import { errors, type StatusError } from "../apimachinery/errors.ts";
import { fieldError } from "../apimachinery/field-errors.ts";
import { parseYamlDocument } from "../apimachinery/parse-yaml-document.ts";
import { isPlainObject } from "../apimachinery/types.ts";
import { EncodedJson } from "../registry/encoded-json.ts";
import type { PatchType } from "../registry/types.ts";
import { jsonNestingBeyond } from "../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";
import { findNonFinite } from "./find-non-finite.ts";

export type BodyMediaType = "json" | "yaml" | PatchType;

const OBJECT_MEDIA_TYPES = ["application/json", "application/yaml"] as const;
export const PATCH_MEDIA_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/apply-patch+yaml",
] as const;

/** Media type without parameters, lower case. */
function essence(contentType: string): string {
  const semi = contentType.indexOf(";");
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/**
 * Which decoder a request body needs. `patch` selects the PATCH media types; otherwise JSON or YAML objects.
 * A missing Content-Type is read as JSON (as clients sending raw bodies expect). Throws 415 for anything else.
 */
export function bodyMediaType(contentType: string | undefined, patch: boolean): BodyMediaType {
  const type = contentType === undefined ? "" : essence(contentType);
  if (patch) {
    if (type === "application/json-patch+json") return "json";
    if (type === "application/merge-patch+json") return "merge";
    if (type === "application/apply-patch+yaml") return "apply";
    // Only kinds that opt in take it (the resource handler checks); the media type itself is known.
    if (type === "application/strategic-merge-patch+json") return "strategic";
    throw errors.unsupportedMediaType(PATCH_MEDIA_TYPES);
  }
  if (type === "" || type === "application/json" || type === "*/*") return "json";
  if (type === "application/yaml" || type === "application/x-yaml" || type === "text/yaml") return "yaml";
  throw errors.unsupportedMediaType(OBJECT_MEDIA_TYPES);
}

/** Bounded by MAX_NESTING_DEPTH: bodies are measured before they are parsed. */
function hasProtoKey(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(hasProtoKey);
  if (Object.hasOwn(value, "__proto__")) return true;
  return Object.values(value).some(hasProtoKey);
}

/** Parsers keep "__proto__" as an own key; later merges could turn it into prototype pollution. */
function rejectProtoKey(text: string, value: unknown): unknown {
  if (text.includes("__proto__") && hasProtoKey(value)) {
    throw errors.badRequest('the request body contains the forbidden key "__proto__"');
  }
  return value;
}

/** JSON.parse itself takes any nesting; what walks the value afterwards does not. */
function checkJsonNesting(text: string): void {
  const at = jsonNestingBeyond(text, MAX_NESTING_DEPTH);
  if (at !== -1) throw errors.nestedTooDeeply("the request body", `at position ${at}`);
}

function decodeJson(text: string): unknown {
  checkJsonNesting(text);
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8 says where: `... at position 12 (line 1 column 13)`. Its `Unexpected token 'x', "<body>" is not valid JSON`
    // form quotes the body, which may hold a password or access key: that quote is dropped.
    const message = (error as Error).message.replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, "");
    throw errors.badRequest(`the request body is not valid JSON: ${message}`);
  }
}

/** `at line 3 column 7` for a text offset. */
function lineAndColumn(text: string, offset: number): string {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return `at line ${line} column ${offset - start + 1}`;
}

function decodeYaml(text: string): unknown {
  // The core schema keeps timestamps as strings; aliases are capped against expansion bombs.
  const parsed = parseYamlDocument(text, { schema: "core", prettyErrors: true });
  if (parsed.tooDeepAt !== undefined)
    throw errors.nestedTooDeeply("the request body", lineAndColumn(text, parsed.tooDeepAt));
  try {
    const document = parsed.document;
    if (document.errors.length > 0) throw document.errors[0];
    return document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const where =
      error instanceof YAMLParseError && error.linePos
        ? ` at line ${error.linePos[0].line} column ${error.linePos[0].col}`
        : "";
    const message = (error as Error).message.split("\n")[0];
    throw errors.badRequest(`the request body is not valid YAML${where}: ${message}`);
  }
}

/** Decodes a request body. Empty bodies decode to undefined. Throws 400 for malformed input. */
export function decodeBody(raw: Buffer | undefined, type: BodyMediaType): unknown {
  if (raw === undefined || raw.length === 0) return undefined;
  // Decoding would replace broken sequences with U+FFFD and store text the client never sent.
  if (!isUtf8(raw)) throw errors.badRequest("the request body is not valid UTF-8");
  const text = raw.toString("utf8");
  const value = decodeText(text, type);
  const found = findNonFinite(text, value);
  if (found) throw nonFiniteError(value, found.path, found.value);
  return value;
}

/** A 422 on the field, named for the object the body describes (what the store would have said of it). */
function nonFiniteError(value: unknown, path: string, number: number): StatusError {
  const object = (isPlainObject(value) ? value : {}) as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  const apiVersion = typeof object.apiVersion === "string" ? object.apiVersion : "";
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const kind = typeof object.kind === "string" ? object.kind : "Object";
  const meta = isPlainObject(object.metadata) ? object.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "";
  return errors.invalid({ group, kind }, name, [
    fieldError.invalid(path, String(number), "must be a finite number within range"),
  ]);
}

function decodeText(text: string, type: BodyMediaType): unknown {
  if (text.trim() === "") return undefined;
  if (type === "yaml") return rejectProtoKey(text, decodeYaml(text));
  if (type === "apply") {
    // kubectl and client-node send JSON here; JSON is YAML, but JSON.parse is much faster when it fits.
    const first = text.trimStart()[0];
    if (first === "{" || first === "[") {
      checkJsonNesting(text);
      try {
        return rejectProtoKey(text, JSON.parse(text));
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        // Fall through to YAML for its error message (or flow-style YAML that is not JSON).
      }
    }
    return rejectProtoKey(text, decodeYaml(text));
  }
  return rejectProtoKey(text, decodeJson(text));
}

/** Encodes a response body: JSON (indented with `pretty`) or YAML. A pre-encoded value is used as is for compact JSON. */
export function encodeBody(value: unknown, kind: "json" | "yaml", pretty = false): string {
  if (value instanceof EncodedJson) {
    if (kind === "json" && !pretty) return value.json;
    return encodeBody(value.decode(), kind, pretty);
  }
  if (kind === "yaml") return stringifyYaml(value, { aliasDuplicateObjects: false, lineWidth: 0 });
  return pretty ? `${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value);
}
