// EncryptionKeyRotation (POST `encryptionkeyrotations`, 201; create-only, admins only): seals the store's secret
// values (signing keys, instance CA keys, password hashes, the Config) under a new key-encryption key while the
// platform serves. The old key keeps opening values until every one is re-encrypted, then it leaves the key file and
// the store's history is compacted, so no value sealed by it remains. status: {keyID, retiredKeyIDs, reencrypted}.

import { integer, object, type Static, string, stringList } from "../../../apimachinery/schema-builders.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { type AdminActionOptions, adminActionDefinition } from "./admin-action.ts";

const schema = {
  spec: object({}, "Nothing to choose: the new key is 32 random bytes (AES-256-GCM)."),
  status: object(
    {
      keyID: string("Id of the new key, which now encrypts every secret value."),
      retiredKeyIDs: stringList("Ids of the keys removed from the key file."),
      reencrypted: integer("Secret values re-encrypted with the new key."),
    },
    "The result of the rotation.",
    ["keyID", "retiredKeyIDs", "reencrypted"],
  ),
};

export type EncryptionKeyRotationResult = Static<typeof schema.status>;

export interface EncryptionKeyRotator extends Pick<AdminActionOptions<unknown, unknown>, "isAdmin"> {
  rotate(): Promise<EncryptionKeyRotationResult>;
}

export function createEncryptionKeyRotationDefinition(rotator: EncryptionKeyRotator): ResourceDefinition {
  return adminActionDefinition({
    kind: "EncryptionKeyRotation",
    plural: "encryptionkeyrotations",
    singular: "encryptionkeyrotation",
    description:
      "EncryptionKeyRotation re-encrypts the platform's secret values at rest under a new key and retires the old one.",
    schema,
    forbiddenAction: "rotate the platform's encryption key",
    isAdmin: (context) => rotator.isAdmin(context),
    async run() {
      return { spec: {}, status: { ...(await rotator.rotate()) } };
    },
  });
}
