// Secret: small amounts of sensitive data. Namespaced. `data` values are base64; `stringData` is a write-only
// convenience merged into `data` on every write and never stored. The type is immutable, and so is everything
// once `immutable: true` is set.

import { isDeepStrictEqual } from "node:util";
import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError, keyPath } from "../../../apimachinery/field-errors.ts";
import { boolean, type KindOf, string, stringMap } from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CORE_GROUP, CORE_VERSION } from "./common.ts";
import {
  base64Problem,
  dataSize,
  decodedLength,
  IMMUTABLE_DETAIL,
  MAX_DATA_BYTES,
  validateConfigKeys,
} from "./validation.ts";

const REDACTED = "<secret contents redacted>";

/** Keys each built-in type requires (ValidateSecret). */
function validateType(secret: Secret): FieldError[] {
  const errs: FieldError[] = [];
  const data = secret.data ?? {};
  const has = (key: string) => Object.hasOwn(data, key);
  const requireKey = (key: string) => {
    if (!has(key)) errs.push(fieldError.required(keyPath("data", key)));
  };
  const requireJson = (key: string) => {
    if (!has(key)) return requireKey(key);
    try {
      const parsed = JSON.parse(Buffer.from(data[key], "base64").toString("utf8"));
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    } catch {
      errs.push(fieldError.invalid(keyPath("data", key), REDACTED, "must be a JSON object"));
    }
  };
  switch (secret.type) {
    case "kubernetes.io/service-account-token":
      if (!secret.metadata.annotations?.["kubernetes.io/service-account.name"]) {
        errs.push(fieldError.required(keyPath("metadata.annotations", "kubernetes.io/service-account.name")));
      }
      break;
    case "kubernetes.io/dockercfg":
      requireJson(".dockercfg");
      break;
    case "kubernetes.io/dockerconfigjson":
      requireJson(".dockerconfigjson");
      break;
    case "kubernetes.io/basic-auth":
      if (!has("username") && !has("password")) {
        requireKey("username");
        requireKey("password");
      }
      break;
    case "kubernetes.io/ssh-auth":
      if (!data["ssh-privatekey"]) errs.push(fieldError.required(keyPath("data", "ssh-privatekey")));
      break;
    case "kubernetes.io/tls":
      requireKey("tls.crt");
      requireKey("tls.key");
      break;
  }
  return errs;
}

/** Base64 that does not decode is a 400, as the API server's decoder reports it (the value is never echoed). */
function checkBase64(secret: Secret): void {
  const problem = base64Problem(secret.data);
  if (problem) throw errors.badRequest(`Secret in version "v1" cannot be handled as a Secret: ${problem}`);
}

export const secretSchema = {
  data: stringMap(
    "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here.",
  ),
  stringData: stringMap(
    "stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience. All keys and values are merged into the data field on write, overwriting any existing values. The stringData field is never output when reading from the API.",
  ),
  type: string(
    "Used to facilitate programmatic handling of secret data, e.g. Opaque (default), kubernetes.io/tls, kubernetes.io/dockerconfigjson.",
  ),
  immutable: boolean(
    "Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).",
  ),
};

export type Secret = KindOf<typeof secretSchema>;

export const secretDefinition: ResourceDefinition = defineResource({
  group: CORE_GROUP,
  version: CORE_VERSION,
  kind: "Secret",
  protobuf: { message: "k8s.io.api.core.v1.Secret" },
  strategicMergePatch: true,
  plural: "secrets",
  singular: "secret",
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
  schema: secretSchema,
  strategy: {
    canonicalize(secret) {
      if (secret.stringData) {
        const data = { ...secret.data };
        for (const [key, value] of Object.entries(secret.stringData)) data[key] = Buffer.from(value).toString("base64");
        secret.data = data;
        delete secret.stringData;
      }
    },
    prepareForCreate(secret) {
      secret.type ||= "Opaque";
      checkBase64(secret);
    },
    prepareForUpdate(secret, old) {
      secret.type ||= old.type || "Opaque";
      checkBase64(secret);
    },
    validate(secret) {
      const errs = validateConfigKeys(secret.data, "data");
      if (dataSize([secret.data], decodedLength) > MAX_DATA_BYTES) {
        errs.push({ type: "FieldValueTooLong", field: "data", detail: `must have at most ${MAX_DATA_BYTES} bytes` });
      }
      errs.push(...validateType(secret));
      return errs;
    },
    validateUpdate(secret, old) {
      const errs: FieldError[] = [];
      if ((secret.type ?? "") !== (old.type ?? ""))
        errs.push(fieldError.invalid("type", secret.type ?? "", "field is immutable"));
      if (old.immutable === true) {
        if (secret.immutable !== true) errs.push(fieldError.forbidden("immutable", IMMUTABLE_DETAIL));
        if (!isDeepStrictEqual(secret.data ?? {}, old.data ?? {})) {
          errs.push(fieldError.forbidden("data", IMMUTABLE_DETAIL));
        }
      }
      return errs;
    },
  },
  columns: [
    { name: "Type", type: "string", description: "The type of the secret.", cell: (s) => s.type },
    {
      name: "Data",
      type: "integer",
      description: "The number of keys in the secret's data.",
      cell: (s) => Object.keys(s.data ?? {}).length,
    },
  ],
  selectableFields: { type: (s) => s.type ?? "" },
});
