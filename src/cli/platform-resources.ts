// The platform resources `platform get|list` knows, by the names users type.

import { CommandError } from "./patches-io.ts";

export interface PlatformResource {
  /** The name shown in help and completion. */
  name: string;
  /** The API's plural. */
  plural: string;
  namespaced: boolean;
  aliases: string[];
}

export const PLATFORM_RESOURCES: readonly PlatformResource[] = [
  { name: "users", plural: "users", namespaced: false, aliases: ["user"] },
  { name: "teams", plural: "teams", namespaced: false, aliases: ["team"] },
  { name: "projects", plural: "projects", namespaced: false, aliases: ["project"] },
  {
    name: "accesskeys",
    plural: "ownedaccesskeys",
    namespaced: false,
    aliases: ["accesskey", "ownedaccesskeys", "ownedaccesskey"],
  },
  {
    name: "virtualclusters",
    plural: "virtualclusterinstances",
    namespaced: true,
    aliases: ["virtualcluster", "vc", "vci", "virtualclusterinstances", "virtualclusterinstance"],
  },
];

export function findResource(word: string): PlatformResource {
  const lower = word.toLowerCase();
  const found = PLATFORM_RESOURCES.find((r) => r.name === lower || r.aliases.includes(lower));
  if (!found) {
    throw new CommandError(
      `unknown resource "${word}": use one of ${PLATFORM_RESOURCES.map((r) => r.name).join(", ")}`,
    );
  }
  return found;
}
