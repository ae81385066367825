// Reading claims the way the connectors need them: a string, or a string-or-list of strings.

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
