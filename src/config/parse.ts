// spec.raw to a config: YAML (1.2 core schema) -> schema check and unknown-field pruning -> semantic checks ->
// defaults. Every problem is a field error whose path is `spec.raw.` + the path inside the YAML (map entries in
// brackets, list items by index), with the YAML line appended, e.g.
//   spec.raw.auth.groupsFilters[1]: Invalid value: "(": must be a valid regular expression: ... (line 7)
// Unknown fields and deprecated fields are warnings, not errors (configs of newer releases carry fields this one
// does not know).

import type { FieldError } from "../apimachinery/field-errors.ts";
import { compileObjectSchema } from "../apimachinery/schema.ts";
import { isPlainObject } from "../apimachinery/types.ts";
import { withDefaults } from "./defaults.ts";
import { Problems } from "./problems.ts";
import { configSchema, DEPRECATED_FIELDS } from "./schema.ts";
import type { PlatformConfig } from "./types.ts";
import { validateAudit } from "./validate-audit.ts";
import { validateAuth } from "./validate-auth.ts";
import {
  validateApps,
  validateCloud,
  validateCostControl,
  validateOidcServer,
  validateSecretStore,
  validateTopLevel,
} from "./validate-other.ts";
import { firstAnchorOrAlias, lineAt, type PathSegment, parseYamlSource, type YamlSource } from "./yaml-source.ts";

export const RAW_FIELD = "spec.raw";

export interface ParsedConfig {
  /** The config with defaults filled in (what status shows). */
  config: PlatformConfig;
  /** The config as written, without defaults (what the text sets explicitly). */
  explicit: PlatformConfig;
  errors: FieldError[];
  warnings: string[];
}

const wrapperSchema = compileObjectSchema({
  spec: { type: "object", properties: { raw: configSchema } },
});

/** `spec.raw.a[0][X-Key]` -> ["a", 0, "X-Key"]. */
function pathOf(field: string): PathSegment[] | undefined {
  if (!field.startsWith(RAW_FIELD)) return undefined;
  const out: PathSegment[] = [];
  for (const match of field.slice(RAW_FIELD.length).matchAll(/\.([^.[\]]+)|\[([^\]]*)\]/g)) {
    if (match[1] !== undefined) out.push(match[1]);
    else out.push(/^\d+$/.test(match[2]) ? Number(match[2]) : match[2]);
  }
  return out;
}

function withLine(error: FieldError, source: YamlSource): FieldError {
  const path = pathOf(error.field);
  const line = path ? lineAt(source, path) : undefined;
  if (line === undefined) return error;
  return { ...error, detail: error.detail ? `${error.detail} (line ${line})` : `(line ${line})` };
}

function protoKeyPath(value: unknown, path: PathSegment[] = []): PathSegment[] | undefined {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = protoKeyPath(item, [...path, index]);
      if (found) return found;
    }
  } else if (isPlainObject(value)) {
    if (Object.hasOwn(value, "__proto__")) return [...path, "__proto__"];
    for (const [key, child] of Object.entries(value)) {
      const found = protoKeyPath(child, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

function yamlErrors(source: YamlSource): FieldError[] {
  return source.document.errors.map((error) => {
    const where = error.linePos ? ` (line ${error.linePos[0].line}, column ${error.linePos[0].col})` : "";
    // Only the first sentence: the rest of yaml's message quotes the source, which may hold secrets.
    const message = error.message.split(" at line ")[0].split("\n")[0];
    return { type: "FieldValueInvalid", field: RAW_FIELD, detail: `not valid YAML: ${message}${where}` };
  });
}

/** Parses and checks spec.raw. `env` supplies defaults taken from the environment (VAULT_ADDR). */
export function parseConfigText(raw: string, env: Record<string, string | undefined> = process.env): ParsedConfig {
  const empty = { config: withDefaults({}, env), explicit: {}, warnings: [] };
  const source = parseYamlSource(raw);
  if (source.document.errors.length > 0) return { ...empty, errors: yamlErrors(source) };
  const anchorLine = firstAnchorOrAlias(source);
  if (anchorLine !== undefined) {
    const detail = `YAML anchors and aliases are not allowed in the platform config (line ${anchorLine}): write each value out`;
    return { ...empty, errors: [{ type: "FieldValueForbidden", field: RAW_FIELD, detail }] };
  }
  const value = source.document.toJS({ maxAliasCount: 100 }) ?? {};
  if (!isPlainObject(value)) {
    return {
      ...empty,
      errors: [{ type: "FieldValueInvalid", field: RAW_FIELD, detail: "must be a YAML mapping of config fields" }],
    };
  }
  const p = new Problems(RAW_FIELD);
  const proto = protoKeyPath(value);
  if (proto) {
    p.forbidden(proto, "the key __proto__ is not allowed");
    return { ...empty, errors: p.errors.map((error) => withLine(error, source)) };
  }

  const wrapper = { spec: { raw: value } };
  for (const field of wrapperSchema.prune(wrapper)) p.warnings.push(`unknown field "${field}"`);
  const schemaErrors = wrapperSchema.validate(wrapper);
  for (const [field, warning] of Object.entries(DEPRECATED_FIELDS)) {
    if (value[field] !== undefined) p.warn([field], warning);
  }

  validateTopLevel(value, p);
  const blocks: [string, (block: Record<string, unknown>, p: Problems) => void][] = [
    ["auth", validateAuth],
    ["oidc", validateOidcServer],
    ["apps", validateApps],
    ["audit", validateAudit],
    ["secretStore", validateSecretStore],
    ["cloud", validateCloud],
    ["costControl", validateCostControl],
  ];
  for (const [key, validate] of blocks) {
    const block = value[key];
    if (isPlainObject(block)) validate(block, p);
  }

  const errors = [...schemaErrors, ...p.errors].map((error) => withLine(error, source));
  const explicit = value as PlatformConfig;
  return { config: withDefaults(explicit, env), explicit, errors, warnings: p.warnings };
}
