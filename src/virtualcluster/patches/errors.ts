/** One problem in a patch list: `field` is where, `text` the full line to show. */
export interface PatchProblem {
  field: string;
  message: string;
  text: string;
  /** Index of the patch the problem is reported at (for ordering). */
  index?: number;
}

/** `field: message`, the usual form. */
export function fieldProblem(field: string, message: string): PatchProblem {
  return { field, message, text: `${field}: ${message}` };
}

/** `field message`: the exact texts of the reference for the patch-level rules. */
export function patchProblem(field: string, message: string): PatchProblem {
  return { field, message, text: `${field} ${message}` };
}

/** Every problem of a patch list, found at settings-load time. */
export class PatchValidationError extends Error {
  readonly problems: readonly PatchProblem[];
  constructor(problems: readonly PatchProblem[]) {
    super(problems.map((problem) => problem.text).join("\n"));
    this.name = "PatchValidationError";
    this.problems = problems;
  }
}

/** A patch failed on one object: the sync of that object fails, naming the patch. */
export class PatchApplyError extends Error {
  /** The patch field, e.g. `sync.toHost.endpoints.patches[2].expression`. */
  readonly field: string;
  /** `context.path` of the failing match. */
  readonly path: string;
  readonly reason: string;
  /** True for limit failures (CPU, memory, stack). */
  readonly limit: boolean;
  constructor(field: string, path: string, reason: string, limit = false) {
    super(`${field} (at ${path === "" ? "the whole object" : path}): ${reason}`);
    this.name = "PatchApplyError";
    this.field = field;
    this.path = path;
    this.reason = reason;
    this.limit = limit;
  }
}
