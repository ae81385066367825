import { fieldProblem, type PatchProblem, PatchValidationError } from "./errors.ts";
import { pathsMayOverlap } from "./path-overlap.ts";
import type { PathSegment } from "./path-parse.ts";
import { type ContextUse, checkExpression, ExpressionSyntaxError, widerUse } from "./sandbox/expression-check.ts";
import type { SandboxLimits } from "./sandbox/limits.ts";
import { ExpressionSandbox } from "./sandbox/sandbox.ts";
import type { Direction, Patch } from "./types.ts";
import { parsePathField, validatePatchList } from "./validate.ts";

export interface CompiledReference {
  apiVersion: string;
  kind: string;
  apiVersionPath?: PathSegment[];
  kindPath?: PathSegment[];
  namePath?: PathSegment[];
  namespacePath?: PathSegment[];
}

export interface CompiledPatch {
  /** `sync.toHost.endpoints.patches[2]`. */
  field: string;
  path: string;
  segments: PathSegment[];
  mode: "expression" | "labels" | "reference";
  /** Sandbox expression ids per direction; a missing id means no patch in that direction. */
  expressions: Partial<Record<Direction, number>>;
  /** What each direction's expression reads of `context`. */
  contextUse: Partial<Record<Direction, ContextUse>>;
  reference?: CompiledReference;
}

/** A validated patch list with its expressions compiled once, ready for applyPatches. Dispose when replaced. */
export interface CompiledPatchSet {
  readonly listPath: string;
  readonly patches: readonly CompiledPatch[];
  /** Present when the list has expressions. */
  readonly sandbox: ExpressionSandbox | undefined;
  /** The widest use of `context` by any expression: decides what applyPatches passes into the sandbox. */
  readonly contextUse: ContextUse;
  /**
   * Per direction, the patches (indices) in application order, grouped into batches: consecutive expression patches
   * whose paths cannot overlap are evaluated in one call into the sandbox.
   */
  readonly batches: Readonly<Record<Direction, readonly (readonly number[])[]>>;
  dispose(): void;
}

export interface CompileOptions {
  /** Per-evaluation limits (defaults: 100 ms CPU, 32 MiB memory). */
  limits?: Partial<SandboxLimits>;
}

const EXPRESSION_FIELDS: [Direction, "expression" | "reverseExpression"][] = [
  ["toHost", "expression"],
  ["toVirtual", "reverseExpression"],
];

function compileReference(reference: Patch["reference"], field: string): CompiledReference {
  const compiled: CompiledReference = { apiVersion: reference?.apiVersion ?? "", kind: reference?.kind ?? "" };
  for (const key of ["apiVersionPath", "kindPath", "namePath", "namespacePath"] as const) {
    const value = reference?.[key];
    if (value) compiled[key] = parsePathField(value, `${field}.reference.${key}`, []) ?? [];
  }
  return compiled;
}

/**
 * Validates `patches` (the list at `listPath`, e.g. `sync.toHost.endpoints.patches`) and compiles every expression
 * once. Throws PatchValidationError listing every problem with its list path.
 */
/** Whether a patch list (as written: anything) has an expression, which needs the expression engine. */
export function hasExpressions(patches: unknown): boolean {
  return (
    Array.isArray(patches) &&
    patches.some((patch: Partial<Patch> | null) => Boolean(patch?.expression || patch?.reverseExpression))
  );
}

export function compilePatches(
  patches: readonly Patch[] | undefined,
  listPath: string,
  options: CompileOptions = {},
): CompiledPatchSet {
  const list = patches ?? [];
  const problems = validatePatchList(list, listPath);
  const sandbox = hasExpressions(list) ? new ExpressionSandbox(options.limits) : undefined;
  const compiled: CompiledPatch[] = [];
  let widestUse: ContextUse = "none";
  try {
    list.forEach((patch, index) => {
      const field = `${listPath}[${index}]`;
      const expressions: CompiledPatch["expressions"] = {};
      const contextUse: CompiledPatch["contextUse"] = {};
      for (const [direction, key] of EXPRESSION_FIELDS) {
        const source = patch?.[key];
        if (!source || typeof source !== "string" || !sandbox) continue;
        try {
          const checked = checkExpression(source);
          expressions[direction] = sandbox.compile(checked.program, checked.contextUse, `${field}.${key}`);
          contextUse[direction] = checked.contextUse;
          widestUse = widerUse(widestUse, checked.contextUse);
        } catch (error) {
          if (!(error instanceof ExpressionSyntaxError)) throw error;
          problems.push({ ...fieldProblem(`${field}.${key}`, error.message), index });
        }
      }
      const mode = patch?.reference != null ? "reference" : patch?.labels != null ? "labels" : "expression";
      compiled.push({
        field,
        path: typeof patch?.path === "string" ? patch.path : "",
        segments: parsePathField(patch?.path, `${field}.path`, []) ?? [],
        mode,
        expressions,
        contextUse,
        reference: mode === "reference" ? compileReference(patch.reference, field) : undefined,
      });
    });
    if (problems.length > 0) throw new PatchValidationError(sortProblems(problems));
  } catch (error) {
    sandbox?.dispose();
    throw error;
  }
  return {
    listPath,
    patches: compiled,
    sandbox,
    contextUse: widestUse,
    batches: { toHost: batchPatches(compiled, "toHost"), toVirtual: batchPatches(compiled, "toVirtual") },
    dispose: () => sandbox?.dispose(),
  };
}

/** Groups the patches that act in `direction` into batches (see CompiledPatchSet.batches). */
function batchPatches(patches: readonly CompiledPatch[], direction: Direction): number[][] {
  const batches: number[][] = [];
  let open: number[] | undefined;
  patches.forEach((patch, index) => {
    if (patch.mode === "expression" && patch.expressions[direction] === undefined) return; // no patch this way
    const joins =
      patch.mode === "expression" &&
      open !== undefined &&
      open.every((other) => !pathsMayOverlap(patches[other].segments, patch.segments));
    if (joins && open) {
      open.push(index);
      return;
    }
    open = patch.mode === "expression" ? [index] : undefined;
    batches.push(open ?? [index]);
  });
  return batches;
}

/** Problems in list order: by the patch they are reported at, stable within a patch. */
function sortProblems(problems: PatchProblem[]): PatchProblem[] {
  return problems
    .map((problem, order) => ({ problem, order }))
    .sort((a, b) => (a.problem.index ?? -1) - (b.problem.index ?? -1) || a.order - b.order)
    .map(({ problem }) => problem);
}
