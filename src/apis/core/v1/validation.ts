// Validation helpers of core/v1 (k8s.io/apimachinery/pkg/util/validation and pkg/apis/core/validation), with
// upstream's wording so kubectl users see the messages they know.

import { isIP } from "node:net";
import { type FieldError, fieldError, keyPath } from "../../../apimachinery/field-errors.ts";

const dns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
const dns1035LabelRegexp = new RegExp(`^${dns1035LabelFmt}$`);
const configKeyFmt = "[-._a-zA-Z0-9]+";
const configKeyRegexp = new RegExp(`^${configKeyFmt}$`);

export const PROTOCOLS = ["SCTP", "TCP", "UDP"] as const;

/** Upstream RegexError wording (examples joined the way Go does, double space included). */
function regexError(message: string, format: string, ...examples: string[]): string {
  const shown = examples.map((example) => `'${example}', `).join(" or ");
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}

/** Go's %#v of a []string, as upstream prints lists of IPs and URLs in messages. */
export function goStrings(values: string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`;
}

const maxLength = (n: number) => `must be no more than ${n} characters`;

/** Service names and port names of services: RFC 1035 labels (start with a letter). */
export function validateDns1035Label(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > 63) errs.push(maxLength(63));
  if (!dns1035LabelRegexp.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        dns1035LabelFmt,
        "my-name",
        "abc-123",
      ),
    );
  }
  return errs;
}

/** Keys of ConfigMap and Secret data (IsConfigMapKey). */
export function validateConfigKey(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > 253) errs.push(maxLength(253));
  if (!configKeyRegexp.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        configKeyFmt,
        "key.name",
        "KEY_NAME",
        "key-name",
      ),
    );
  }
  if (value === ".") errs.push("must not be '.'");
  else if (value === "..") errs.push("must not be '..'");
  else if (value.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}

/** Every key of a data map, as `data[key]: Invalid value: "key": ...`. */
export function validateConfigKeys(map: Record<string, unknown> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(map ?? {})) {
    for (const detail of validateConfigKey(key)) errs.push(fieldError.invalid(keyPath(path, key), key, detail));
  }
  return errs;
}

export function isValidIp(value: string): boolean {
  return isIP(value) !== 0;
}

export const IP_DETAIL = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

export function validatePortNumber(port: unknown, path: string): FieldError[] {
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
    return [fieldError.invalid(path, port ?? null, "must be between 1 and 65535, inclusive")];
  }
  return [];
}

/** A named container port (IANA_SVC_NAME), as a Service targetPort may use. */
export function validatePortName(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 15) errs.push(maxLength(15));
  if (!/^[-a-z0-9]+$/.test(value)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(value)) errs.push("must contain at least one letter (a-z)");
  if (value.includes("--")) errs.push("must not contain consecutive hyphens");
  if (value.startsWith("-") || value.endsWith("-")) errs.push("must not begin or end with a hyphen");
  return errs;
}

export function validateProtocol(protocol: unknown, path: string): FieldError[] {
  if (protocol === undefined) return [fieldError.required(path)];
  if (!(PROTOCOLS as readonly unknown[]).includes(protocol))
    return [fieldError.notSupported(path, protocol, PROTOCOLS)];
  return [];
}

/** Byte size of a data map's keys and values, as the 1 MiB limit of ConfigMaps and Secrets counts it. */
export function dataSize(maps: (Record<string, string> | undefined)[], decode: (value: string) => number): number {
  let total = 0;
  for (const map of maps) {
    for (const [key, value] of Object.entries(map ?? {})) total += Buffer.byteLength(key) + decode(value);
  }
  return total;
}

export const MAX_DATA_BYTES = 1024 * 1024;

const BASE64_CHAR = /[A-Za-z0-9+/]/;

/**
 * Where standard, padded base64 (as Go's encoding/json decodes []byte; CR and LF ignored) first goes wrong, or
 * undefined when `value` is valid.
 */
export function base64ErrorOffset(value: string): number | undefined {
  let count = 0;
  let padding = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === "\r" || c === "\n") continue;
    if (c === "=") {
      padding++;
      if (padding > 2 || count % 4 < 2) return i;
    } else if (padding > 0 || !BASE64_CHAR.test(c)) return i;
    count++;
  }
  return count % 4 === 0 ? undefined : value.length - (count % 4);
}

/** The 400 of a base64 field that does not decode, worded as the API server's decoding error. */
export function base64Problem(values: Record<string, string> | undefined): string | undefined {
  for (const value of Object.values(values ?? {})) {
    if (typeof value !== "string") continue;
    const offset = base64ErrorOffset(value);
    if (offset !== undefined) return `illegal base64 data at input byte ${offset}`;
  }
  return undefined;
}

export const decodedLength = (value: string): number => Buffer.from(value, "base64").length;

export const IMMUTABLE_DETAIL = "field is immutable when `immutable` is set";
