// The platform resources `platform get|list` offers: every resource the platform's discovery (the APIResourceList of
// management.platform.sh/v1) says can be listed, found by the word a user types the way kubectl resolves it (plural,
// singular, a short name, the kind in lower case), plus the friendly words of resource-aliases.ts.

import { API_GROUP_PATH, type PlatformClient } from "../virtualcluster/lifecycle/platform-client.ts";
import { CommandError } from "./command-error.ts";
import { COMMON_RESOURCES, RESOURCE_ALIASES } from "./resource-aliases.ts";

/** One entry of an APIResourceList, as discovery serves it. */
export interface DiscoveredResource {
  name: string;
  singularName?: string;
  shortNames?: string[];
  namespaced: boolean;
  kind: string;
  verbs?: string[];
}

export interface PlatformResource {
  /** The name shown in messages (the plural, or its friendly name). */
  name: string;
  plural: string;
  singular: string;
  shortNames: string[];
  /** Friendly words (resource-aliases.ts). */
  aliases: readonly string[];
  kind: string;
  namespaced: boolean;
}

/** kubectl's order: a word that is some resource's plural names that one, else a singular, and so on. */
const MATCH_ORDER: readonly ((resource: PlatformResource) => readonly string[])[] = [
  (resource) => [resource.plural],
  (resource) => (resource.singular ? [resource.singular] : []),
  (resource) => resource.shortNames,
  (resource) => resource.aliases,
  (resource) => [resource.kind],
];

/** The listable resources of a discovery answer, the common ones first (in their usual order), then the rest. */
export function platformResources(discovered: readonly DiscoveredResource[]): PlatformResource[] {
  const resources = discovered
    .filter((entry) => !entry.name.includes("/") && entry.verbs?.includes("list"))
    .map(
      (entry): PlatformResource => ({
        name: RESOURCE_ALIASES[entry.name]?.shown ?? entry.name,
        plural: entry.name,
        singular: entry.singularName ?? "",
        shortNames: entry.shortNames ?? [],
        aliases: RESOURCE_ALIASES[entry.name]?.words ?? [],
        kind: entry.kind,
        namespaced: entry.namespaced,
      }),
    );
  const rank = (resource: PlatformResource) => {
    const index = COMMON_RESOURCES.indexOf(resource.name);
    return index === -1 ? COMMON_RESOURCES.length : index;
  };
  // Array.prototype.sort is stable: the others keep discovery's order.
  return resources.sort((a, b) => rank(a) - rank(b));
}

/** The resource a typed word names, compared without case; an unknown word is one line listing the choices. */
export function findResource(resources: readonly PlatformResource[], word: string): PlatformResource {
  const lower = word.toLowerCase();
  for (const wordsOf of MATCH_ORDER) {
    const found = resources.find((resource) =>
      wordsOf(resource).some((candidate) => candidate.toLowerCase() === lower),
    );
    if (found) return found;
  }
  throw new CommandError(`unknown resource "${word}": use one of ${resources.map((r) => r.name).join(", ")}`);
}

/** GET the platform's APIResourceList and derive the resources from it. */
export async function fetchPlatformResources(client: PlatformClient): Promise<PlatformResource[]> {
  const list = await client.request<{ resources?: DiscoveredResource[] }>("GET", API_GROUP_PATH);
  return platformResources(list.resources ?? []);
}
