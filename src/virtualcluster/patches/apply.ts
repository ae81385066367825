import type { CompiledPatch, CompiledPatchSet } from "./compile.ts";
import { PatchApplyError } from "./errors.ts";
import { cloneJson } from "./json-clone.ts";
import { formatContextPath } from "./path-format.ts";
import { findPathMatches, isJsonObject, type PathMatch, removeAtMatch, setAtMatch } from "./path-navigate.ts";
import { applyReference, type ReferenceScope } from "./reference-patch.ts";
import { EvaluationError, type EvaluationRequest, type EvaluationResult } from "./sandbox/sandbox.ts";
import type { ApplyOptions, ApplyResult, ReferencedObject, VirtualClusterInfo } from "./types.ts";

type Json = Record<string, unknown>;

const metadataOf = (value: unknown): Json | undefined =>
  isJsonObject(value) && isJsonObject(value.metadata) ? value.metadata : undefined;

const namespaceOf = (value: unknown): string | undefined => {
  const namespace = metadataOf(value)?.namespace;
  return typeof namespace === "string" && namespace !== "" ? namespace : undefined;
};

/** The first label or annotation whose value is not a string (or a map that is not a map), if any. */
export function notStringValue(metadata: Json | undefined): { path: string; type: string } | undefined {
  for (const map of ["labels", "annotations"]) {
    const values = metadata?.[map];
    if (values === undefined) continue;
    if (!isJsonObject(values)) {
      return {
        path: `metadata.${map}`,
        type: values === null ? "null" : Array.isArray(values) ? "a list" : typeof values,
      };
    }
    for (const [key, value] of Object.entries(values)) {
      if (typeof value !== "string") {
        const type = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
        return { path: formatContextPath(["metadata", map, key]), type };
      }
    }
  }
  return undefined;
}

/** JSON text of `context.vcluster`, per object identity: the settings are large and rarely change. */
const vclusterTexts = new WeakMap<VirtualClusterInfo, string>();
function vclusterText(vcluster: VirtualClusterInfo): string {
  let text = vclusterTexts.get(vcluster);
  if (text === undefined) {
    const { name, namespace, config } = vcluster;
    text = JSON.stringify({ name, namespace, config: config ?? null });
    vclusterTexts.set(vcluster, text);
  }
  return text;
}

/** True when a match is the object's own `metadata.labels`. */
const isOwnLabels = (match: PathMatch): boolean =>
  match.keys.length === 2 && match.keys[0] === "metadata" && match.keys[1] === "labels";

/** The matches of one patch in a batch, and where their results start in the batch. */
interface Planned {
  patch: CompiledPatch;
  matches: PathMatch[];
  first: number;
}

class Run {
  root: Json;
  readonly references = new Map<string, ReferencedObject>();
  private readonly options: ApplyOptions;
  private readonly set: CompiledPatchSet;
  private readonly scope: Omit<ReferenceScope, "patch">;

  constructor(set: CompiledPatchSet, object: unknown, options: ApplyOptions) {
    this.set = set;
    this.options = options;
    const copy = cloneJson(object);
    if (!isJsonObject(copy)) throw new TypeError("applyPatches expects a Kubernetes object");
    this.root = copy;
    const { context, direction } = options;
    this.scope = {
      options,
      virtualNamespace:
        options.namespace ??
        namespaceOf(context.virtualObject) ??
        (direction === "toHost" ? namespaceOf(object) : undefined),
      hostNamespace: direction === "toVirtual" ? (namespaceOf(object) ?? namespaceOf(context.hostObject)) : undefined,
    };
  }

  /** Passes the sandbox only the parts of `context` its expressions can read. */
  prepareSandbox(): void {
    const { sandbox, contextUse } = this.set;
    if (!sandbox) return;
    const { context, translator } = this.options;
    sandbox.setVirtualToHostDNS((name) => translator.virtualToHostDNS(name));
    if (contextUse === "none") return;
    sandbox.setInputText("vcluster", vclusterText(context.vcluster));
    if (contextUse !== "full") return;
    sandbox.setInput("hostObject", context.hostObject ?? null);
    sandbox.setInput("virtualObject", context.virtualObject ?? null);
  }

  run(): void {
    const { patches, batches } = this.set;
    for (const batch of batches[this.options.direction]) {
      const first = patches[batch[0]];
      if (first.mode === "labels") this.guarded(first, () => this.labels(first));
      else if (first.mode === "reference") this.guarded(first, () => this.reference(first));
      else this.expressions(batch.map((index) => patches[index]));
    }
  }

  private fieldOf(patch: CompiledPatch): string {
    if (patch.mode !== "expression") return `${patch.field}.${patch.mode}`;
    return `${patch.field}.${this.options.direction === "toHost" ? "expression" : "reverseExpression"}`;
  }

  /**
   * Runs one patch's writes and checks it left metadata.name and metadata.namespace alone and kept every label and
   * annotation value a string (Kubernetes refuses anything else; the preview and the sync both fail here).
   */
  private guarded(patch: CompiledPatch, write: () => void): void {
    const before = metadataOf(this.root);
    const [name, namespace] = [before?.name, before?.namespace];
    write();
    const after = metadataOf(this.root);
    if (after?.name !== name || after?.namespace !== namespace) {
      throw new PatchApplyError(
        this.fieldOf(patch),
        patch.path,
        "the patch changed metadata.name or metadata.namespace, which the syncer sets",
      );
    }
    const wrong = notStringValue(after);
    if (wrong) {
      throw new PatchApplyError(
        this.fieldOf(patch),
        wrong.path,
        `${wrong.path} must be a string (label and annotation values are strings), not ${wrong.type}`,
      );
    }
  }

  /** Evaluates a batch of expression patches in one sandbox call, then writes their results patch by patch. */
  private expressions(batch: CompiledPatch[]): void {
    const { direction } = this.options;
    const planned: Planned[] = [];
    const requests: EvaluationRequest[] = [];
    for (const patch of batch) {
      const id = patch.expressions[direction]!;
      const use = patch.contextUse[direction];
      const withPath = use === "light" || use === "full";
      // The spec: "If not found, the patch is not applied" (a missing final ["key"] included).
      const matches = findPathMatches(this.root, patch.segments).filter((match) => match.exists);
      planned.push({ patch, matches, first: requests.length });
      for (const match of matches) {
        requests.push({
          id,
          path: withPath ? formatContextPath(match.keys) : "",
          valueExists: match.exists,
          value: match.value,
        });
      }
    }
    if (requests.length === 0) return;
    let results: EvaluationResult[];
    try {
      results = this.set.sandbox!.evaluateAll(requests);
    } catch (error) {
      if (!(error instanceof EvaluationError)) throw error;
      const failed = planned.findLast((entry) => entry.first <= error.index) ?? planned[0];
      const match = failed.matches[error.index - failed.first];
      throw new PatchApplyError(
        this.fieldOf(failed.patch),
        formatContextPath(match?.keys ?? []),
        error.message,
        error.limit,
      );
    }
    for (const { patch, matches, first } of planned) {
      this.guarded(patch, () => this.write(patch, matches, results.slice(first, first + matches.length)));
    }
  }

  /** Writes in reverse document order, so removing an array element never shifts one still to be written. */
  private write(patch: CompiledPatch, matches: PathMatch[], results: EvaluationResult[]): void {
    for (let i = matches.length - 1; i >= 0; i--) {
      const match = matches[i];
      const result = results[i];
      if (match.parent === undefined) {
        if (result.remove || !isJsonObject(result.value)) {
          throw new PatchApplyError(this.fieldOf(patch), "", "an expression on the whole object must return an object");
        }
        this.root = result.value;
      } else if (result.remove) {
        if (match.exists) removeAtMatch(match);
      } else {
        setAtMatch(match, result.value);
      }
    }
  }

  private labels(patch: CompiledPatch): void {
    const { translator, direction } = this.options;
    for (const match of findPathMatches(this.root, patch.segments)) {
      if (match.value === undefined || match.value === null) continue;
      // The object's own labels are translated by the syncer (once, both ways); a second translation would drop
      // rewritten keys.
      if (isOwnLabels(match)) continue;
      let selector: unknown;
      try {
        selector =
          direction === "toHost"
            ? translator.hostSelector(match.value, this.scope.virtualNamespace)
            : translator.virtualSelector(match.value);
      } catch (error) {
        throw new PatchApplyError(this.fieldOf(patch), formatContextPath(match.keys), (error as Error).message);
      }
      if (match.parent === undefined) this.root = selector as Json;
      else setAtMatch(match, selector);
    }
  }

  private reference(patch: CompiledPatch): void {
    const scope = { ...this.scope, patch: patch.field };
    for (const match of findPathMatches(this.root, patch.segments)) {
      if (match.value === undefined || match.value === null) continue;
      const referenced = applyReference(patch.reference!, match, scope);
      if (!referenced) continue;
      const key = [referenced.apiVersion, referenced.kind, referenced.source.namespace, referenced.source.name].join(
        "\n",
      );
      if (!this.references.has(key)) this.references.set(key, referenced);
    }
  }
}

/**
 * Applies a compiled patch list to a copy of `object` in one direction (expression for toHost, reverseExpression
 * for toVirtual; labels and reference patches both ways) and returns the patched copy and the objects its reference
 * patches point at. Throws PatchApplyError naming the patch; the caller's object is never modified.
 */
export function applyPatches(set: CompiledPatchSet, object: unknown, options: ApplyOptions): ApplyResult {
  const run = new Run(set, object, options);
  run.prepareSandbox();
  run.run();
  return { object: run.root, references: [...run.references.values()] };
}
