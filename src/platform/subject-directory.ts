// Whether a user or team named in a granting field exists (see src/apis/management/v1/access-checks.ts), read
// from the store the registry writes, so a subject created a moment ago is found.

import type { SubjectDirectory } from "../apis/management/v1/access-checks.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import { objectKey } from "../registry/keys.ts";
import type { Registry } from "../registry/registry.ts";

const PLURAL = { User: "users", Team: "teams" } as const;

export function registrySubjects(registry: () => Registry): SubjectDirectory {
  return {
    async exists(kind, name) {
      const store = registry().genericStore(GROUP, PLURAL[kind]);
      if (!store) throw new Error(`${PLURAL[kind]} is not registered`);
      return (await registry().storage.get(objectKey(store.definition, undefined, name))) !== undefined;
    },
  };
}
