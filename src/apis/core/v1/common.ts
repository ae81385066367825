// Shapes shared by several core/v1 resources (the legacy group, served at /api/v1).

import { object, type Schema, string } from "../../../apimachinery/schema-builders.ts";

export const CORE_GROUP = "";
export const CORE_VERSION = "v1";

export const objectReferenceSchema = (description: string) =>
  object(
    {
      apiVersion: string("API version of the referent."),
      kind: string("Kind of the referent."),
      namespace: string("Namespace of the referent."),
      name: string("Name of the referent."),
      uid: string("UID of the referent."),
      resourceVersion: string("Specific resourceVersion to which this reference is made, if any."),
      fieldPath: string(
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
      ),
    },
    description,
  );

export const localObjectReferenceSchema = (description: string) =>
  object({ name: string("Name of the referent.") }, description);

/** Marks a list as merged item by item (by `mergeKey`, or by value) in strategic merge patches, as upstream's. */
export const mergedByKey = <T>(list: Schema<T>, mergeKey?: string): Schema<T> => ({
  ...list,
  "x-kubernetes-patch-strategy": "merge",
  ...(mergeKey ? { "x-kubernetes-patch-merge-key": mergeKey } : {}),
});

/** `<none>` as kubectl prints an empty cell. */
export const NONE = "<none>";
