// SigningKeyRotation (POST `signingkeyrotations`, 201; create-only, admins only): adds a new current signing key for
// direct cluster endpoint tokens. Tokens signed before stay valid: the previous key stays in the JWKS until every
// token it signed has expired. status: {keyID (the new key), algorithm, publishedKeyIDs (the JWKS after, new first)}.

import { object, type Static, string, stringList } from "../../../apimachinery/schema-builders.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { type AdminActionOptions, adminActionDefinition } from "./admin-action.ts";

export const ROTATION_KIND = "SigningKeyRotation";
export const ROTATION_ALGORITHMS = ["ES256", "RS256"] as const;
export type RotationAlgorithm = (typeof ROTATION_ALGORITHMS)[number];

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
      algorithm: string("Algorithm of the new key.", { enum: [...ROTATION_ALGORITHMS] }),
      publishedKeyIDs: stringList("Key ids published in the JWKS after the rotation, the new key first."),
    },
    "The result of the rotation.",
    ["keyID", "algorithm", "publishedKeyIDs"],
  ),
};

export type SigningKeyRotationResult = Static<typeof schema.status>;

export interface SigningKeyRotator extends Pick<AdminActionOptions<unknown, unknown>, "isAdmin"> {
  rotate(algorithm: RotationAlgorithm): Promise<SigningKeyRotationResult>;
}

export function createSigningKeyRotationDefinition(rotator: SigningKeyRotator): ResourceDefinition {
  return adminActionDefinition({
    kind: ROTATION_KIND,
    plural: "signingkeyrotations",
    singular: "signingkeyrotation",
    description:
      "SigningKeyRotation adds a new signing key for direct cluster endpoint tokens; older public keys stay published until their tokens expire.",
    schema,
    forbiddenAction: "rotate the platform's signing key",
    isAdmin: (context) => rotator.isAdmin(context),
    async run(spec) {
      const status = await rotator.rotate(spec.algorithm ?? "ES256");
      return { spec: { algorithm: status.algorithm }, status };
    },
  });
}
