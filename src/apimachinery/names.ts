// Name, label and annotation rules of k8s.io/apimachinery/pkg/util/validation, with the same error details, plus the
// generateName suffix of the API server (storage/names). Lengths are counted in UTF-8 bytes, as Go's len() does.

import { randomInt } from "node:crypto";
import { type FieldError, fieldError, keyPath } from "./field-errors.ts";
import { isPlainObject } from "./types.ts";

const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const qualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const labelValueFmt = `(${qualifiedNameFmt})?`;

const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`);
const qualifiedNameRegexp = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`);

const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;
/** TotalAnnotationSizeLimitB of the API server. */
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

const GENERATED_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const GENERATED_SUFFIX_LENGTH = 5;
const MAX_GENERATED_PREFIX = 63 - GENERATED_SUFFIX_LENGTH;

function byteLength(value: string): number {
  return Buffer.byteLength(value, "utf8");
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** Upstream RegexError: the message, examples (joined the way Go does, double space included) and the regex. */
function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  const shown = examples.map((example) => `'${example}', `).join(" or ");
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}

export function validateDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!dns1123LabelRegexp.test(value)) {
    // A valid subdomain that is not a valid label can only be failing because of its dots.
    if (dns1123SubdomainRegexp.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"));
  }
  return errs;
}

export function validateDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRegexp.test(value)) {
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"));
  }
  return errs;
}

/** A label key, annotation key or finalizer: an optional DNS subdomain prefix and "/", then a name of <= 63. */
export function validateQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push("prefix part must be non-empty");
    else errs.push(...validateDns1123Subdomain(prefix).map((msg) => `prefix part ${msg}`));
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push("name part must be non-empty");
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!qualifiedNameRegexp.test(name)) {
    errs.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")}`);
  }
  return errs;
}

export function validateLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!labelValueRegexp.test(value))
    errs.push(regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"));
  return errs;
}

/** Checks that a labels or annotations value is a map of strings; reports the entries that are not. */
function stringMapErrors(map: unknown, path: string): FieldError[] | Record<string, string> {
  if (map === undefined || map === null) return {};
  if (!isPlainObject(map)) return [fieldError.typeInvalid(path, map, "must be a map of string keys to string values")];
  const errs: FieldError[] = [];
  for (const key of Object.keys(map)) {
    const value = map[key];
    if (typeof value !== "string") errs.push(fieldError.typeInvalid(keyPath(path, key), value, "must be a string"));
  }
  return errs.length > 0 ? errs : (map as Record<string, string>);
}

/** metav1 ValidateLabels: keys are qualified names, values label values; errors sit on `path` itself, as upstream. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  const map = stringMapErrors(labels, path);
  if (Array.isArray(map)) return map;
  const errs: FieldError[] = [];
  for (const key of Object.keys(map)) {
    for (const msg of validateQualifiedName(key)) errs.push(fieldError.invalid(path, key, msg));
    for (const msg of validateLabelValue(map[key])) errs.push(fieldError.invalid(path, map[key], msg));
  }
  return errs;
}

/** ValidateAnnotations: keys are qualified names (case-insensitive), keys plus values at most 256 KiB in total. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const map = stringMapErrors(annotations, path);
  if (Array.isArray(map)) return map;
  const errs: FieldError[] = [];
  let total = 0;
  for (const key of Object.keys(map)) {
    for (const msg of validateQualifiedName(key.toLowerCase())) errs.push(fieldError.invalid(path, key, msg));
    total += byteLength(key) + byteLength(map[key]);
  }
  if (total > ANNOTATIONS_MAX_BYTES) {
    errs.push({ type: "FieldValueTooLong", field: path, detail: `must have at most ${ANNOTATIONS_MAX_BYTES} bytes` });
  }
  return errs;
}

/** A name for metadata.generateName: the prefix cut to 58 characters plus 5 random characters. */
export function generateName(prefix: string): string {
  let suffix = "";
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) {
    suffix += GENERATED_SUFFIX_ALPHABET[randomInt(GENERATED_SUFFIX_ALPHABET.length)];
  }
  return prefix.slice(0, MAX_GENERATED_PREFIX) + suffix;
}
