// The names shown for the resources people use most, and the friendly words typed for them. The platform lists the
// same words as the resources' shortNames; they stay here too so that `platform get` keeps accepting them from a
// platform of an earlier version, whose discovery does not list them.

/** Per plural: the name shown in messages, help and completion, and the friendly words typed for it. */
export const RESOURCE_ALIASES: Readonly<Record<string, { shown: string; words: readonly string[] }>> = {
  ownedaccesskeys: { shown: "accesskeys", words: ["accesskeys", "accesskey"] },
  virtualclusterinstances: { shown: "virtualclusters", words: ["virtualclusters", "virtualcluster", "vc"] },
};

/**
 * The resources people use most, by shown name, in the order help, completion and error messages list them (before any
 * other resource the platform lists). Help and the completion script offer these without asking the platform.
 */
export const COMMON_RESOURCES: readonly string[] = ["users", "teams", "projects", "accesskeys", "virtualclusters"];
