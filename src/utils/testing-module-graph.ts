// Which modules a fresh Node process loads for an import: tests that keep heavy dependencies out of a process's start
// (an idle agent's memory, a CLI command's CPU) assert on it.

import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

const SRC = resolve(import.meta.dirname, "..");

/** Every module URL a fresh Node process resolves while it imports `specifier` (relative to src/). */
export function modulesLoadedBy(specifier: string): string[] {
  const script = `
    import { registerHooks } from "node:module";
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); seen.add(result.url); return result; } });
    await import(${JSON.stringify(specifier)});
    console.log(JSON.stringify([...seen]));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: SRC, encoding: "utf8" });
  return JSON.parse(out) as string[];
}
