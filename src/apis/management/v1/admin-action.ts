// A create-only action resource for platform admins (POST `<plural>`, 201): the shape of the key rotations. The
// request is decoded like every action's (decodeActionSpec); the caller must be an admin whatever the authorizer
// said; the response echoes the spec and carries the result in status. Nothing is stored by the action itself.

import { errors } from "../../../apimachinery/errors.ts";
import { compileObjectSchema } from "../../../apimachinery/schema.ts";
import type { Schema } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import { decodeActionSpec } from "./directclusterendpointtoken-decode.ts";

export interface AdminActionOptions<Spec, Result> {
  kind: string;
  plural: string;
  singular: string;
  description: string;
  /** spec (what the caller sends) and status (the result): the types of both are derived from them. */
  schema: { spec: Schema<Spec>; status: Schema<Result> };
  /** Completes "User X cannot ...: only platform admins may", e.g. "rotate the platform's signing key". */
  forbiddenAction: string;
  isAdmin(context: RequestContext): boolean;
  /** Runs the action; resolves to the spec it acted on and its status. */
  run(spec: Spec): Promise<{ spec: Spec; status: Result }>;
}

export function adminActionDefinition<Spec, Result>(options: AdminActionOptions<Spec, Result>): ResourceDefinition {
  const { kind, plural, schema, description } = options;
  const compiled = compileObjectSchema(schema);
  return {
    group: GROUP,
    version: VERSION,
    kind,
    plural,
    singular: options.singular,
    namespaced: false,
    description,
    schema,
    strategy: {},
    action: {
      kind,
      description,
      schema,
      verbs: ["create"],
      async handle({ context, body }) {
        if (!options.isAdmin(context)) {
          throw errors.forbidden(
            { group: GROUP, resource: plural },
            "",
            `User "${context.user.name}" cannot ${options.forbiddenAction}: only platform admins may`,
          );
        }
        const result = await options.run(decodeActionSpec<Spec>(body, kind, compiled, context));
        const response: KubeObject = { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: {}, ...result };
        return response;
      },
    },
  };
}
