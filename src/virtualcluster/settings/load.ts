import { readFileSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import { type CompiledPatchSet, type CompileOptions, compilePatches, hasExpressions } from "../patches/compile.ts";
import { PatchValidationError } from "../patches/errors.ts";
import { loadEngine } from "../patches/sandbox/engine.ts";
import { type DefaultsOptions, withDefaults } from "./defaults.ts";
import { PATCH_LISTS, type PatchedResource } from "./settings-schema.ts";
import type { VirtualClusterSettings } from "./types.ts";

/** Every problem found in a settings file, one line each. */
export class SettingsError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join("\n"));
    this.name = "SettingsError";
    this.problems = problems;
  }
}

export interface LoadOptions extends DefaultsOptions, CompileOptions {}

/** Settings with every patch list validated and compiled. Dispose to free the sandboxes. */
export interface LoadedSettings {
  settings: VirtualClusterSettings;
  patches: Record<PatchedResource, CompiledPatchSet>;
  dispose(): void;
}

/** Parses YAML (or JSON) text into plain data; YAML errors become SettingsError naming their line and column. */
export function parseSettingsText(text: string): unknown {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false, lineCounter });
  if (document.errors.length > 0) {
    throw new SettingsError(
      document.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return `YAML line ${line}, column ${col}: ${error.message.split("\n")[0]}`;
      }),
    );
  }
  return document.toJS({ maxAliasCount: 100 }) ?? {};
}

/** Checks settings and applies defaults, without compiling patches. Throws SettingsError. */
export function parseSettings(text: string, options: DefaultsOptions = {}): VirtualClusterSettings {
  const { settings, problems } = withDefaults(parseSettingsText(text), options);
  if (problems.length > 0) throw new SettingsError(problems);
  return settings;
}

const listAt = (settings: VirtualClusterSettings, path: string) =>
  path.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], settings);

/**
 * Loads settings at settings-load time: schema and defaults, then every patch list validated and compiled, so that
 * bad patches are reported now with their list paths, not at sync time. The expression engine loads only for
 * settings with an expression. Rejects with SettingsError listing every problem.
 */
export async function loadSettings(text: string, options: LoadOptions = {}): Promise<LoadedSettings> {
  const { settings, problems } = withDefaults(parseSettingsText(text), options);
  if (PATCH_LISTS.some(({ path }) => hasExpressions(listAt(settings, path)))) await loadEngine();
  const patches: Partial<Record<PatchedResource, CompiledPatchSet>> = {};
  const dispose = () => {
    for (const set of Object.values(patches)) set?.dispose();
  };
  for (const { resource, path } of PATCH_LISTS) {
    // A list with schema problems is reported once, by the schema.
    if (problems.some((problem) => problem.startsWith(`${path}[`))) continue;
    try {
      patches[resource] = compilePatches(listAt(settings, path) as never, path, options);
    } catch (error) {
      if (!(error instanceof PatchValidationError)) throw error;
      problems.push(...error.problems.map((problem) => problem.text));
    }
  }
  if (problems.length > 0) {
    dispose();
    throw new SettingsError(problems);
  }
  return { settings, patches: patches as Record<PatchedResource, CompiledPatchSet>, dispose };
}

/** Reads a settings file ("-" is not accepted here: settings come from a file). Throws SettingsError. */
export function readSettingsFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SettingsError([`${file}: cannot read the settings file${code ? ` (${code})` : ""}`]);
  }
}
