// API discovery documents: the legacy APIGroupList/APIGroup/APIResourceList/APIVersions forms and the aggregated
// APIGroupDiscoveryList (apidiscovery.k8s.io/v2, KEP-3352) kubectl asks for first. Shapes follow
// k8s.io/apimachinery/pkg/apis/meta/v1 and k8s.io/api/apidiscovery/v2.

import type { ResourceDefinition } from "../registry/types.ts";
import { resourceVerbs } from "./resource-verbs.ts";

export const AGGREGATED_DISCOVERY_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

export type AggregatedDiscoveryVersion = "v2" | "v2beta1";

const STATUS_VERBS = ["get", "patch", "update"];

/** The Content-Type to answer with for an aggregated discovery version. */
export function aggregatedDiscoveryContentType(version: AggregatedDiscoveryVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

/**
 * Which aggregated form the Accept header prefers, or undefined when plain JSON (or a wildcard) comes first.
 * Follows q-values, then the listed order, like the apiserver's negotiation.
 */
export function aggregatedDiscoveryVersion(accept: string | undefined): AggregatedDiscoveryVersion | undefined {
  if (!accept) return undefined;
  for (const range of parseAccept(accept)) {
    const { type, params } = range;
    if (type !== "application/json" && type !== "application/*" && type !== "*/*") continue;
    if (params.as === undefined && params.g === undefined) return undefined;
    if (type === "application/json" && params.g === "apidiscovery.k8s.io" && params.as === "APIGroupDiscoveryList") {
      if (params.v === "v2" || params.v === "v2beta1") return params.v;
    }
  }
  return undefined;
}

/** True when the client asked for the aggregated discovery form (v2 or v2beta1) before plain JSON. */
export function wantsAggregatedDiscovery(accept: string | undefined): boolean {
  return aggregatedDiscoveryVersion(accept) !== undefined;
}

/** GET /api (legacy form). */
export function apiVersions(): object {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "" }],
  };
}

/** GET /apis (legacy form): every non-core group. */
export function apiGroupList(definitions: ResourceDefinition[]): object {
  const groups = [...groupVersions(definitions).entries()]
    .filter(([group]) => group !== "")
    .map(([group, versions]) => groupEntry(group, versions));
  return { kind: "APIGroupList", apiVersion: "v1", groups };
}

/** GET /apis/<group>, or undefined when no resource lives in the group. */
export function apiGroup(definitions: ResourceDefinition[], group: string): object | undefined {
  const versions = groupVersions(definitions).get(group);
  if (group === "" || !versions) return undefined;
  return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(group, versions) };
}

/**
 * GET /apis/<group>/<version> (or /api/v1 with group ""), or undefined when nothing is served there.
 * Main resources come first: client-node takes the first entry whose kind matches.
 */
export function apiResourceList(definitions: ResourceDefinition[], group: string, version: string): object | undefined {
  const served = sortedByPlural(definitions.filter((d) => d.group === group && d.version === version));
  if (served.length === 0) return undefined;
  const main = served.map((d) => ({
    name: d.plural,
    singularName: d.singular,
    namespaced: d.namespaced,
    kind: d.kind,
    verbs: resourceVerbs(d),
    ...namesAndCategories(d),
  }));
  const sub = served.flatMap((d) =>
    subresourcesOf(d).map((s) => ({
      name: `${d.plural}/${s.name}`,
      singularName: "",
      namespaced: d.namespaced,
      kind: s.kind,
      verbs: s.verbs,
    })),
  );
  sub.sort((a, b) => compare(a.name, b.name));
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources: [...main, ...sub],
  };
}

/** GET /api or /apis answered as an APIGroupDiscoveryList (v2 unless the client negotiated v2beta1). */
export function aggregatedDiscovery(
  definitions: ResourceDefinition[],
  scope: "apis" | "api",
  version: AggregatedDiscoveryVersion = "v2",
): object {
  const items = [...groupVersions(definitions).entries()]
    .filter(([group]) => (scope === "api" ? group === "" : group !== ""))
    .map(([group, versions]) => ({
      metadata: group === "" ? {} : { name: group },
      versions: versions.map((v) => ({
        version: v,
        resources: sortedByPlural(definitions.filter((d) => d.group === group && d.version === v)).map(
          discoveryResource,
        ),
        freshness: "Current",
      })),
    }));
  return { kind: "APIGroupDiscoveryList", apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

function discoveryResource(d: ResourceDefinition): object {
  const subresources = subresourcesOf(d)
    .sort((a, b) => compare(a.name, b.name))
    .map((s) => ({
      subresource: s.name,
      responseKind: { group: d.group, version: d.version, kind: s.kind },
      verbs: s.verbs,
    }));
  return {
    resource: d.plural,
    responseKind: { group: d.group, version: d.version, kind: d.kind },
    scope: d.namespaced ? "Namespaced" : "Cluster",
    singularResource: d.singular,
    verbs: resourceVerbs(d),
    ...namesAndCategories(d),
    ...(subresources.length > 0 ? { subresources } : {}),
  };
}

interface SubresourceEntry {
  name: string;
  kind: string;
  verbs: string[];
}

function subresourcesOf(d: ResourceDefinition): SubresourceEntry[] {
  const entries: SubresourceEntry[] = [];
  if (d.statusSubresource) entries.push({ name: "status", kind: d.kind, verbs: STATUS_VERBS });
  for (const [name, handler] of Object.entries(d.subresources ?? {})) {
    entries.push({ name, kind: handler.kind, verbs: [...new Set<string>(handler.verbs)].sort() });
  }
  return entries;
}

// Empty lists are omitted, as the apiserver's omitempty does.
function namesAndCategories(d: ResourceDefinition): { shortNames?: string[]; categories?: string[] } {
  return {
    ...(d.shortNames?.length ? { shortNames: [...d.shortNames] } : {}),
    ...(d.categories?.length ? { categories: [...d.categories] } : {}),
  };
}

function groupEntry(group: string, versions: string[]): object {
  const entries = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: entries, preferredVersion: entries[0] };
}

/** Groups in registration order, each with its versions sorted by Kubernetes version priority. */
function groupVersions(definitions: ResourceDefinition[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const d of definitions) {
    const versions = groups.get(d.group) ?? [];
    if (!versions.includes(d.version)) versions.push(d.version);
    groups.set(d.group, versions);
  }
  for (const versions of groups.values()) versions.sort(compareKubeVersions);
  return groups;
}

function sortedByPlural(definitions: ResourceDefinition[]): ResourceDefinition[] {
  return [...definitions].sort((a, b) => compare(a.plural, b.plural));
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

// GA before beta before alpha, higher numbers first; anything else after, alphabetically (as upstream).
function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = KUBE_VERSION.exec(v);
    if (!m) return undefined;
    const stability = m[2] === undefined ? 2 : m[2] === "beta" ? 1 : 0;
    return [stability, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (!ra || !rb) return ra ? -1 : rb ? 1 : compare(a, b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i] - ra[i];
  return 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  const ranges = accept
    .split(",")
    .map((part): MediaRange => {
      const [type = "", ...rest] = part.split(";").map((s) => s.trim());
      const params: Record<string, string> = {};
      for (const p of rest) {
        const eq = p.indexOf("=");
        if (eq <= 0) continue;
        params[p.slice(0, eq).trim().toLowerCase()] = p
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, "$1");
      }
      const q = params.q === undefined ? 1 : Number(params.q);
      delete params.q;
      return { type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 0 };
    })
    .filter((r) => r.type !== "" && r.q > 0);
  // Array.prototype.sort is stable, so equal q-values keep the client's order.
  return ranges.sort((a, b) => b.q - a.q);
}
