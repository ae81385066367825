// SigningKeyRotation (POST `signingkeyrotations`, 201; create-only, admins only): adds a new current signing key for
// direct cluster endpoint tokens. Tokens signed before stay valid: the previous key stays in the JWKS until every
// token it signed has expired. status: {keyID (the new key), algorithm, publishedKeyIDs (the JWKS after, new first)}.

import { errors } from "../../../apimachinery/errors.ts";
import { compileObjectSchema } from "../../../apimachinery/schema.ts";
import { object, string, stringList } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import { decodeActionSpec } from "./directclusterendpointtoken-decode.ts";

export const ROTATION_KIND = "SigningKeyRotation";
export const ROTATION_ALGORITHMS = ["ES256", "RS256"] as const;
export type RotationAlgorithm = (typeof ROTATION_ALGORITHMS)[number];

export interface SigningKeyRotator {
  rotate(algorithm: RotationAlgorithm): Promise<{ keyID: string; algorithm: string; publishedKeyIDs: string[] }>;
  /** Only platform admins rotate (the authorizer already asked; this holds for any authorizer). */
  isAdmin(context: RequestContext): boolean;
}

const schema = {
  spec: object(
    {
      algorithm: string("Algorithm of the new key: ES256 (P-256, the default) or RS256 (RSA 2048).", {
        enum: [...ROTATION_ALGORITHMS],
      }),
    },
    "The key to add.",
  ),
  status: object(
    {
      keyID: string("Key id (kid) of the new current key."),
      algorithm: string("Algorithm of the new key."),
      publishedKeyIDs: stringList("Key ids published in the JWKS after the rotation, the new key first."),
    },
    "The result of the rotation.",
  ),
};
const compiled = compileObjectSchema(schema);

export function createSigningKeyRotationDefinition(rotator: SigningKeyRotator): ResourceDefinition {
  const description =
    "SigningKeyRotation adds a new signing key for direct cluster endpoint tokens; older public keys stay published until their tokens expire.";
  return {
    group: GROUP,
    version: VERSION,
    kind: ROTATION_KIND,
    plural: "signingkeyrotations",
    singular: "signingkeyrotation",
    namespaced: false,
    description,
    schema,
    strategy: {},
    action: {
      kind: ROTATION_KIND,
      description,
      schema,
      verbs: ["create"],
      async handle({ context, body }) {
        if (!rotator.isAdmin(context)) {
          throw errors.forbidden(
            { group: GROUP, resource: "signingkeyrotations" },
            "",
            `User "${context.user.name}" cannot rotate the platform's signing key: only platform admins may`,
          );
        }
        const spec = decodeActionSpec<{ algorithm?: RotationAlgorithm }>(body, ROTATION_KIND, compiled, context);
        const status = await rotator.rotate(spec.algorithm ?? "ES256");
        const response: KubeObject = {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: ROTATION_KIND,
          metadata: {},
          spec: { algorithm: status.algorithm },
          status,
        };
        return response;
      },
    },
  };
}
