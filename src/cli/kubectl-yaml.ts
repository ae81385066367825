// YAML as kubectl reads it. kubectl (sigs.k8s.io/yaml on go-yaml v2) follows YAML 1.1, where yes/no/on/off/y/n,
// 1_000, 2001-12-14 and the like are not strings; this project's YAML library follows 1.2. Objects are read with the
// 1.1 schema, as kubectl would read the same file, and written so both versions read every string back as a string.

import { Document, parse, Scalar, type Tags, visit } from "yaml";

/**
 * go-yaml v2 reads timestamps into a plain value as strings (for backward compatibility) and knows no base-60
 * numbers: those 1.1 tags are left out.
 */
const kubectlTags = (tags: Tags): Tags =>
  tags.filter(
    (tag) =>
      typeof tag === "string" ||
      (tag.tag !== "tag:yaml.org,2002:timestamp" && !("format" in tag && tag.format === "TIME")),
  );

/** Parses YAML text the way kubectl does (YAML 1.1 scalars). */
export function parseKubectlYaml(text: string): unknown {
  return parse(text, { uniqueKeys: true, version: "1.1", customTags: kubectlTags });
}

/** True when a string written plain would be read back as something else under YAML 1.1 or 1.2. */
function ambiguous(text: string): boolean {
  if (text === "" || text.includes("\n") || text.length > 64) return false;
  for (const version of ["1.1", "1.2"] as const) {
    try {
      if (typeof parse(text, { version }) !== "string") return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** YAML text of `value` that kubectl reads back as the same value: every ambiguous string is quoted. */
export function stringifyForKubectl(value: unknown): string {
  const document = new Document(value, { version: "1.1" });
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && ambiguous(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return document.toString();
}
