// Collects what is wrong with a config (field errors) and what deserves a warning, with paths in the config
// convention: the prefix (spec.raw) then the config path, `spec.raw.auth.groupsFilters[1]`.

import { type FieldError, fieldError } from "../apimachinery/field-errors.ts";
import { isPlainObject } from "../apimachinery/types.ts";
import { fieldPath } from "./schema-walk.ts";
import type { PathSegment } from "./yaml-source.ts";

export class Problems {
  readonly errors: FieldError[] = [];
  readonly warnings: string[] = [];
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  field(path: readonly PathSegment[]): string {
    return fieldPath(this.prefix, path);
  }

  invalid(path: readonly PathSegment[], value: unknown, detail: string): void {
    this.errors.push(fieldError.invalid(this.field(path), value, detail));
  }

  required(path: readonly PathSegment[], detail = ""): void {
    this.errors.push(fieldError.required(this.field(path), detail));
  }

  forbidden(path: readonly PathSegment[], detail: string): void {
    this.errors.push(fieldError.forbidden(this.field(path), detail));
  }

  duplicate(path: readonly PathSegment[], value: unknown): void {
    this.errors.push(fieldError.duplicate(this.field(path), value));
  }

  warn(path: readonly PathSegment[], text: string): void {
    this.warnings.push(`${this.field(path)}: ${text}`);
  }
}

/** Typed reads of a parsed (schema-checked, but possibly still wrong) config: wrong types read as absent. */
export const read = {
  object(value: unknown, key: string): Record<string, unknown> | undefined {
    const child = isPlainObject(value) ? value[key] : undefined;
    return isPlainObject(child) ? child : undefined;
  },
  string(value: unknown, key: string): string | undefined {
    const child = isPlainObject(value) ? value[key] : undefined;
    return typeof child === "string" ? child : undefined;
  },
  list(value: unknown, key: string): unknown[] {
    const child = isPlainObject(value) ? value[key] : undefined;
    return Array.isArray(child) ? child : [];
  },
  strings(value: unknown, key: string): [string, number][] {
    return read
      .list(value, key)
      .map((item, index) => [item, index] as [unknown, number])
      .filter((entry): entry is [string, number] => typeof entry[0] === "string");
  },
  number(value: unknown, key: string): number | undefined {
    const child = isPlainObject(value) ? value[key] : undefined;
    return typeof child === "number" ? child : undefined;
  },
  bool(value: unknown, key: string): boolean {
    return isPlainObject(value) && value[key] === true;
  },
};
