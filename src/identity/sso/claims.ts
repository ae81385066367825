// What every connector reads the same way: claims (a string, or a string-or-list of strings), config fields, files
// the config names, and the refusal of a user outside the configured groups.

import { readFileSync } from "node:fs";
import { SsoRefusal } from "./types.ts";

/** A claim as a string (numbers are accepted as ids); undefined otherwise. */
export function claimString(claims: Record<string, unknown>, name: string): string | undefined {
  const value = claims[name];
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A claim that must be a string or a list of strings; anything else yields undefined. */
export function claimStrings(claims: Record<string, unknown>, name: string): string[] | undefined {
  const value = claims[name];
  if (value === undefined || value === null) return [];
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value as string[];
  return undefined;
}

/** Keeps configured values of a string list (empty or missing: none). */
export function configStrings(config: Record<string, unknown>, name: string): string[] {
  const value = config[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string" && item !== "") : [];
}

export function configString(config: Record<string, unknown>, name: string): string | undefined {
  const value = config[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A file the config names (a CA, a service account); a missing one is an error naming the field and the path. */
export function readConfiguredFile(field: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`${field} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** The refusal of a user in none of the configured groups, naming the block's rule. */
export function notInGroups(rule: string, groups: readonly string[]): SsoRefusal {
  return new SsoRefusal(
    rule.split(" ").pop() ?? rule,
    `you are not a member of any group allowed to log in (${rule}: ${groups.join(", ")})`,
  );
}
