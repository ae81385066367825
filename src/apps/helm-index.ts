// A Helm chart repository's index.yaml (apiVersion v1): every chart with its versions, newest first, and the
// fields the catalog shows. Chart archive URLs may be relative to the repository. The YAML is parsed with aliases
// bounded (an index is data, not a place for alias bombs) and only the fields read here are kept.

import { parse } from "yaml";

export interface ChartVersion {
  version: string;
  appVersion?: string;
  description?: string;
  created?: string;
  deprecated?: boolean;
  /** Absolute addresses of the chart archive. */
  urls: string[];
  digest?: string;
}

export interface Chart {
  name: string;
  description?: string;
  icon?: string;
  home?: string;
  keywords?: string[];
  sources?: string[];
  /** Newest first. */
  versions: ChartVersion[];
}

const str = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
const strs = (value: unknown) =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : undefined;

/** Semantic version order (pre-releases before their release); unparsable versions last, by text. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?/.exec(v);
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return pa ? -1 : pb ? 1 : a.localeCompare(b);
  for (let i = 1; i <= 3; i++) {
    const diff = Number(pa[i]) - Number(pb[i]);
    if (diff !== 0) return diff;
  }
  if (pa[4] === pb[4]) return 0;
  if (!pa[4]) return 1;
  if (!pb[4]) return -1;
  return pa[4].localeCompare(pb[4], undefined, { numeric: true });
}

export function parseHelmIndex(text: string, repositoryUrl: string): Chart[] {
  const document = parse(text, { maxAliasCount: 100, uniqueKeys: false }) as unknown;
  if (!document || typeof document !== "object") throw new Error("index.yaml is not a YAML map");
  const entries = (document as { entries?: unknown }).entries;
  if (entries === undefined || entries === null) return [];
  if (typeof entries !== "object" || Array.isArray(entries)) throw new Error("index.yaml: entries is not a map");
  const base = repositoryUrl.endsWith("/") ? repositoryUrl : `${repositoryUrl}/`;
  const charts: Chart[] = [];
  for (const [name, list] of Object.entries(entries as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    const versions: ChartVersion[] = [];
    for (const item of list as Record<string, unknown>[]) {
      const version = str(item?.version);
      if (!version) continue;
      const urls = (strs(item.urls) ?? []).flatMap((url) => {
        try {
          return [new URL(url, base).toString()];
        } catch {
          return [];
        }
      });
      versions.push({
        version,
        appVersion: str(item.appVersion),
        description: str(item.description),
        created: str(item.created),
        deprecated: item.deprecated === true || undefined,
        urls,
        digest: str(item.digest),
      });
    }
    if (versions.length === 0) continue;
    versions.sort((a, b) => compareVersions(b.version, a.version));
    const newest = (list as Record<string, unknown>[]).find((item) => item?.version === versions[0].version) ?? {};
    charts.push({
      name,
      description: str(newest.description),
      icon: str(newest.icon),
      home: str(newest.home),
      keywords: strs(newest.keywords),
      sources: strs(newest.sources),
      versions,
    });
  }
  return charts.sort((a, b) => a.name.localeCompare(b.name));
}
