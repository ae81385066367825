// The common metadata rules of every resource (the spec's "Common metadata" table). The generic store calls these;
// no strategy repeats them.

import { isDeepStrictEqual } from "node:util";
import { type FieldError, fieldError } from "../apimachinery/field-errors.ts";
import {
  validateAnnotations,
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabels,
  validateQualifiedName,
} from "../apimachinery/names.ts";
import { isPlainObject, type KubeObject, type ObjectMeta } from "../apimachinery/types.ts";
import type { ResourceDefinition } from "./types.ts";

/** Finalizers the API server itself understands (deletion propagation). */
export const ORPHAN_FINALIZER = "orphan";
export const FOREGROUND_FINALIZER = "foregroundDeletion";

const GENERATE_NAME_PREFIX_SUFFIX = /-$/;

/** Name rules for this resource: DNS-1123 subdomain unless the definition says otherwise. */
function validateName(definition: ResourceDefinition, name: string, prefix: boolean): string[] {
  if (definition.nameValidation === "path-segment") return validatePathSegmentName(name, prefix);
  // A generateName prefix may end in "-" (the random suffix follows).
  const value = prefix ? name.replace(GENERATE_NAME_PREFIX_SUFFIX, "a") : name;
  return validateDns1123Subdomain(value);
}

/** Kubernetes' path-segment rule (RBAC names such as `system:controller:x`): usable as one URL path segment. */
function validatePathSegmentName(name: string, prefix: boolean): string[] {
  const problems: string[] = [];
  if (!prefix && (name === "." || name === "..")) problems.push(`may not be '${name}'`);
  for (const forbidden of ["/", "%"]) {
    if (name.includes(forbidden)) problems.push(`may not contain '${forbidden}'`);
  }
  if (name.length > 253) problems.push("must be no more than 253 characters");
  return problems;
}

/** Validates metadata on create. `metadata` has already been defaulted by the store. */
export function validateObjectMetaCreate(definition: ResourceDefinition, metadata: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (!metadata.name) {
    if (!metadata.generateName) {
      errs.push(fieldError.required("metadata.name", "name or generateName is required"));
    } else {
      for (const detail of validateName(definition, metadata.generateName, true)) {
        errs.push(fieldError.invalid("metadata.generateName", metadata.generateName, detail));
      }
    }
  } else {
    for (const detail of validateName(definition, metadata.name, false)) {
      errs.push(fieldError.invalid("metadata.name", metadata.name, detail));
    }
  }
  errs.push(...validateCommonMeta(definition, metadata));
  return errs;
}

function validateCommonMeta(definition: ResourceDefinition, metadata: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (definition.namespaced) {
    if (!metadata.namespace) {
      errs.push(fieldError.required("metadata.namespace", ""));
    } else {
      for (const detail of validateDns1123Label(metadata.namespace)) {
        errs.push(fieldError.invalid("metadata.namespace", metadata.namespace, detail));
      }
    }
  } else if (metadata.namespace) {
    errs.push(fieldError.forbidden("metadata.namespace", "not allowed on this type"));
  }
  if (metadata.labels !== undefined) errs.push(...validateLabels(metadata.labels, "metadata.labels"));
  if (metadata.annotations !== undefined) {
    errs.push(...validateAnnotations(metadata.annotations, "metadata.annotations"));
  }
  errs.push(...validateFinalizers(metadata.finalizers));
  errs.push(...validateOwnerReferences(metadata.ownerReferences));
  return errs;
}

function validateFinalizers(finalizers: string[] | undefined): FieldError[] {
  if (!finalizers) return [];
  const errs: FieldError[] = [];
  finalizers.forEach((finalizer, i) => {
    const path = `metadata.finalizers[${i}]`;
    // The two built-in finalizers are plain words; every other one must be a qualified name with a domain.
    if (finalizer === ORPHAN_FINALIZER || finalizer === FOREGROUND_FINALIZER) return;
    for (const detail of validateQualifiedName(finalizer)) errs.push(fieldError.invalid(path, finalizer, detail));
    if (!finalizer.includes("/")) {
      errs.push(
        fieldError.invalid(path, finalizer, "name is neither a standard finalizer name nor is it fully qualified"),
      );
    }
  });
  if (finalizers.includes(ORPHAN_FINALIZER) && finalizers.includes(FOREGROUND_FINALIZER)) {
    errs.push(
      fieldError.invalid(
        "metadata.finalizers",
        finalizers,
        `finalizer ${FOREGROUND_FINALIZER} and ${ORPHAN_FINALIZER} cannot be both set`,
      ),
    );
  }
  return errs;
}

function validateOwnerReferences(refs: ObjectMeta["ownerReferences"]): FieldError[] {
  if (!refs) return [];
  const errs: FieldError[] = [];
  const controllers: string[] = [];
  refs.forEach((ref, i) => {
    const path = `metadata.ownerReferences[${i}]`;
    if (!isPlainObject(ref)) return; // the schema reports the type
    for (const field of ["apiVersion", "kind", "name", "uid"] as const) {
      if (!ref[field])
        errs.push(fieldError.invalid(`${path}.${field}`, ref[field] ?? "", `${field} must not be empty`));
    }
    if (ref.controller) controllers.push(`${ref.kind}/${ref.name}`);
  });
  if (controllers.length > 1) {
    errs.push(
      fieldError.invalid(
        "metadata.ownerReferences",
        refs,
        `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(" and ")}`,
      ),
    );
  }
  return errs;
}

/** Validates metadata on update against the stored version. */
export function validateObjectMetaUpdate(
  definition: ResourceDefinition,
  metadata: ObjectMeta,
  old: ObjectMeta,
): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (field: "name" | "namespace" | "uid" | "creationTimestamp") => {
    if ((metadata[field] ?? "") !== (old[field] ?? "")) {
      errs.push(fieldError.invalid(`metadata.${field}`, metadata[field] ?? "", "field is immutable"));
    }
  };
  immutable("name");
  immutable("namespace");
  immutable("uid");
  immutable("creationTimestamp");
  if (old.deletionTimestamp) {
    if (metadata.deletionTimestamp !== old.deletionTimestamp) {
      errs.push(
        fieldError.invalid(
          "metadata.deletionTimestamp",
          metadata.deletionTimestamp ?? null,
          "field is immutable; may only be changed via deletion",
        ),
      );
    }
    if (metadata.deletionGracePeriodSeconds !== old.deletionGracePeriodSeconds) {
      errs.push(
        fieldError.invalid(
          "metadata.deletionGracePeriodSeconds",
          metadata.deletionGracePeriodSeconds ?? null,
          "field is immutable; may only be changed via deletion",
        ),
      );
    }
    const added = (metadata.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f));
    if (added.length > 0) {
      errs.push(
        fieldError.forbidden(
          "metadata.finalizers",
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(", ")}}`,
        ),
      );
    }
  }
  errs.push(...validateCommonMeta(definition, metadata));
  return errs;
}

/** True when anything outside metadata and status differs: the desired state changed, so generation moves. */
export function specChanged(next: KubeObject, old: KubeObject): boolean {
  const keys = new Set([...Object.keys(next), ...Object.keys(old)]);
  for (const key of keys) {
    if (key === "metadata" || key === "status" || key === "apiVersion" || key === "kind") continue;
    if (!isDeepStrictEqual(next[key], old[key])) return true;
  }
  return false;
}
