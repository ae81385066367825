// `users/<name>/accesskeys` and `teams/<name>/accesskeys` (GET): the access keys of one user or team, without key
// material ({accessKeys: [OwnedAccessKey]}). Authorization already decided the caller may read them.

import { array, openObject } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { ActionHandler, ResourceStore } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";

export function accessKeysSubresource(
  owner: "user" | "team",
  /** The ownedaccesskeys store itself (not a caller-filtered view), resolved when the first request comes. */
  keys: () => ResourceStore,
): ActionHandler {
  const kind = owner === "user" ? "UserAccessKeys" : "TeamAccessKeys";
  return {
    kind,
    description: `The access keys of a ${owner}. Key material is never included.`,
    schema: { accessKeys: array(openObject("An OwnedAccessKey."), `The access keys of the ${owner}.`) },
    verbs: ["get"],
    async handle({ context, parent }) {
      const name = parent?.metadata.name ?? "";
      const list = await keys().list(context, { fieldSelector: `spec.${owner}=${name}` });
      const response: KubeObject = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind,
        metadata: { name },
        accessKeys: list.items,
      };
      return response;
    },
  };
}
