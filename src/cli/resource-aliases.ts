// The words `platform get|list` has always accepted that the platform's discovery does not (yet) list, applied on top
// of discovery (platform-resources.ts), and the names shown for the resources people use most.

/**
 * Per plural: the name shown in messages, help and completion, and the friendly words typed for it. The words belong
 * in the resources' shortNames (src/apis/management/v1/ownedaccesskey.ts: accesskeys, accesskey;
 * virtualclusterinstance.ts: virtualclusters, virtualcluster, vc); once discovery lists them, drop them here and keep
 * the shown name.
 */
export const RESOURCE_ALIASES: Readonly<Record<string, { shown: string; words: readonly string[] }>> = {
  ownedaccesskeys: { shown: "accesskeys", words: ["accesskeys", "accesskey"] },
  virtualclusterinstances: { shown: "virtualclusters", words: ["virtualclusters", "virtualcluster", "vc"] },
};

/**
 * The resources people use most, by shown name, in the order help, completion and error messages list them (before any
 * other resource the platform lists). Help and the completion script offer these without asking the platform.
 */
export const COMMON_RESOURCES: readonly string[] = ["users", "teams", "projects", "accesskeys", "virtualclusters"];
