// ConfigMap: non-confidential configuration. Namespaced. `data` holds UTF-8 strings, `binaryData` base64; a key may
// appear in only one of them. Everything but metadata is frozen once `immutable: true` is set.

import { isDeepStrictEqual } from "node:util";
import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError, keyPath } from "../../../apimachinery/field-errors.ts";
import { boolean, type KindOf, stringMap } from "../../../apimachinery/schema-builders.ts";
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

function checkBase64(configMap: ConfigMap): void {
  const problem = base64Problem(configMap.binaryData);
  if (problem) throw errors.badRequest(`ConfigMap in version "v1" cannot be handled as a ConfigMap: ${problem}`);
}

export const configMapSchema = {
  data: stringMap(
    "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field.",
  ),
  binaryData: stringMap(
    "BinaryData contains the binary data (base64 encoded). Each key must consist of alphanumeric characters, '-', '_' or '.'. The keys stored in BinaryData must not overlap with the ones in the Data field.",
  ),
  immutable: boolean(
    "Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified).",
  ),
};

export type ConfigMap = KindOf<typeof configMapSchema>;

export const configMapDefinition: ResourceDefinition = defineResource({
  group: CORE_GROUP,
  version: CORE_VERSION,
  kind: "ConfigMap",
  protobuf: { message: "k8s.io.api.core.v1.ConfigMap" },
  strategicMergePatch: true,
  plural: "configmaps",
  singular: "configmap",
  shortNames: ["cm"],
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description: "ConfigMap holds configuration data for pods to consume.",
  schema: configMapSchema,
  strategy: {
    prepareForCreate: checkBase64,
    prepareForUpdate: checkBase64,
    validate(configMap) {
      const errs: FieldError[] = [
        ...validateConfigKeys(configMap.data, "data"),
        ...validateConfigKeys(configMap.binaryData, "binaryData"),
      ];
      for (const key of Object.keys(configMap.data ?? {})) {
        if (configMap.binaryData && Object.hasOwn(configMap.binaryData, key)) {
          errs.push(fieldError.invalid(keyPath("data", key), key, "duplicate of key present in binaryData"));
        }
      }
      const size =
        dataSize([configMap.data], (v) => Buffer.byteLength(v)) + dataSize([configMap.binaryData], decodedLength);
      if (size > MAX_DATA_BYTES) {
        errs.push({ type: "FieldValueTooLong", field: "data", detail: `must have at most ${MAX_DATA_BYTES} bytes` });
      }
      return errs;
    },
    validateUpdate(configMap, old) {
      const errs: FieldError[] = [];
      if (old.immutable !== true) return errs;
      if (configMap.immutable !== true) errs.push(fieldError.forbidden("immutable", IMMUTABLE_DETAIL));
      if (!isDeepStrictEqual(configMap.data ?? {}, old.data ?? {}))
        errs.push(fieldError.forbidden("data", IMMUTABLE_DETAIL));
      if (!isDeepStrictEqual(configMap.binaryData ?? {}, old.binaryData ?? {})) {
        errs.push(fieldError.forbidden("binaryData", IMMUTABLE_DETAIL));
      }
      return errs;
    },
  },
  columns: [
    {
      name: "Data",
      type: "integer",
      description: "The number of keys in data and binaryData.",
      cell: (c) => Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length,
    },
  ],
});
