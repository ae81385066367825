import { fieldProblem, type PatchProblem, patchProblem } from "./errors.ts";
import { PatchPathError, type PathSegment, parsePatchPath } from "./path-parse.ts";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const REFERENCE_PATHS = ["apiVersionPath", "kindPath", "namePath", "namespacePath"] as const;

/** Parses a path, recording a problem instead of throwing. */
export function parsePathField(value: unknown, field: string, problems: PatchProblem[]): PathSegment[] | undefined {
  if (typeof value !== "string") {
    problems.push(fieldProblem(field, value === undefined ? "Required value" : "Invalid value: must be a string"));
    return undefined;
  }
  try {
    return parsePatchPath(value);
  } catch (error) {
    if (error instanceof PatchPathError) {
      problems.push(fieldProblem(field, error.message));
      return undefined;
    }
    throw error;
  }
}

const isSyncerField = (segments: PathSegment[]) =>
  segments.length === 2 &&
  segments.every((segment) => segment.kind === "key") &&
  (segments[0] as { key: string }).key === "metadata" &&
  ["name", "namespace"].includes((segments[1] as { key: string }).key);

function validateReference(reference: unknown, field: string, problems: PatchProblem[]): void {
  if (!isObject(reference)) {
    problems.push(fieldProblem(field, "Invalid value: must be an object"));
    return;
  }
  for (const key of ["apiVersion", "kind"]) {
    const value = reference[key];
    if (value === undefined || value === "") {
      problems.push(fieldProblem(`${field}.${key}`, "Required value: a reference patch needs apiVersion and kind"));
    } else if (typeof value !== "string") {
      problems.push(fieldProblem(`${field}.${key}`, "Invalid value: must be a string"));
    }
  }
  for (const key of REFERENCE_PATHS) {
    if (reference[key] !== undefined && reference[key] !== "")
      parsePathField(reference[key], `${field}.${key}`, problems);
  }
  const otherPath = REFERENCE_PATHS.some(
    (key) => key !== "namePath" && reference[key] !== undefined && reference[key] !== "",
  );
  if (otherPath && (reference.namePath === undefined || reference.namePath === "")) {
    problems.push(
      fieldProblem(
        `${field}.namePath`,
        "Required value: namePath is required when apiVersionPath, kindPath or namespacePath is set",
      ),
    );
  }
}

/**
 * Structural rules of a patch list with the reference's exact texts: one mode per patch (expression and
 * reverseExpression together count as one), no duplicate paths, no metadata.name or metadata.namespace, reference
 * fields, and path syntax. Expression syntax is checked when compiling.
 */
export function validatePatchList(patches: readonly unknown[], listPath: string): PatchProblem[] {
  const problems: PatchProblem[] = [];
  const usedPaths = new Map<string, number>();
  patches.forEach((patch, index) => {
    const field = `${listPath}[${index}]`;
    const start = problems.length;
    if (!isObject(patch)) {
      problems.push({ ...fieldProblem(field, "Invalid value: must be an object"), index });
      return;
    }
    const hasExpression = Boolean(patch.expression) || Boolean(patch.reverseExpression);
    const modes = [hasExpression, patch.labels != null, patch.reference != null].filter(Boolean).length;
    if (modes > 1) problems.push(patchProblem(field, "can only use one of: expression, labels or reference"));
    if (modes === 0) problems.push(patchProblem(field, "need to use one of: expression, labels or reference"));
    if (typeof patch.path === "string") {
      const first = usedPaths.get(patch.path);
      if (first !== undefined) {
        problems.push(
          patchProblem(`${listPath}[${first}]`, `and ${field} have the same path ${JSON.stringify(patch.path)}`),
        );
      } else {
        usedPaths.set(patch.path, index);
      }
    }
    const segments = parsePathField(patch.path, `${field}.path`, problems);
    if (segments && isSyncerField(segments)) {
      problems.push(
        fieldProblem(
          `${field}.path`,
          `Invalid value: ${JSON.stringify(patch.path)}: metadata.name and metadata.namespace are set by the syncer and cannot be patched`,
        ),
      );
    }
    for (const key of ["expression", "reverseExpression"]) {
      if (patch[key] !== undefined && typeof patch[key] !== "string") {
        problems.push(fieldProblem(`${field}.${key}`, "Invalid value: must be a string"));
      }
    }
    if (patch.labels != null && !isObject(patch.labels)) {
      problems.push(fieldProblem(`${field}.labels`, "Invalid value: must be an object (labels: {})"));
    }
    if (patch.reference != null) validateReference(patch.reference, `${field}.reference`, problems);
    for (let i = start; i < problems.length; i++) problems[i].index = index;
  });
  return problems;
}
