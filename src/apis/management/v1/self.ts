// Self (POST `selves` with `{}`, 201): who the caller is — user, teams, access key, scope, groups — plus the platform
// host and project namespace prefix. The command-line client validates a login with it. `spec.accessKey` may carry
// another credential (an access key's plain value or a direct cluster endpoint token) to describe it instead: the
// token review of virtual clusters, allowed to keys with the role `virtualcluster` and to admins. It is never echoed.

import { errors } from "../../../apimachinery/errors.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import { type SelfStatus, selfSchema as schema } from "./self-schema.ts";

export type { SelfEntity, SelfStatus } from "./self-schema.ts";

/** Answers for the caller, or for the credential in spec.accessKey (400 when it does not authenticate, 403 when the
 * caller may not review credentials). */
export type DescribeCaller = (context: RequestContext, accessKey?: string) => Promise<SelfStatus>;

export function createSelfDefinition(describe: DescribeCaller): ResourceDefinition {
  const description = "Self describes the caller: user, teams, access key and its scope.";
  return {
    group: GROUP,
    version: VERSION,
    kind: "Self",
    plural: "selves",
    singular: "self",
    namespaced: false,
    description,
    schema,
    strategy: {},
    action: {
      kind: "Self",
      description,
      schema,
      verbs: ["create"],
      async handle({ context, body }) {
        const spec = isPlainObject(body) ? body.spec : undefined;
        if (spec !== undefined && !isPlainObject(spec)) throw errors.badRequest("spec must be an object");
        const accessKey = spec?.accessKey;
        if (accessKey !== undefined && typeof accessKey !== "string") {
          throw errors.badRequest("spec.accessKey must be a string");
        }
        const response: KubeObject = {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "Self",
          metadata: {},
          spec: {},
          status: await describe(context, accessKey || undefined),
        };
        return response;
      },
    },
  };
}
