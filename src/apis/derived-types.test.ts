// One shape per kind: a kind's TypeScript type is derived from its schema (src/apimachinery/schema-builders.ts), so
// there is no second shape left to disagree with it. These tests keep it so: no hand-written kind type in the API
// definitions or the console, no defineResource with a type of its own, and the schema modules the console imports
// carry no server code (nothing but schema modules at run time, no node: built-in, no package).

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function filesUnder(dir: string, extensions: readonly string[]): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(path, extensions));
    else if (extensions.some((ext) => entry.name.endsWith(ext)) && !/\.test\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Every import and re-export of a file: its specifier, and whether it is erased (import type / export type). */
const IMPORT = /^(?:import|export)\s+(type\s+)?(?:[^;"']*?\sfrom\s+)?["']([^"']+)["'];/gms;
function importsOf(path: string): { specifier: string; typeOnly: boolean }[] {
  return [...read(path).matchAll(IMPORT)].map((match) => ({ specifier: match[2], typeOnly: Boolean(match[1]) }));
}
const resolved = (from: string, specifier: string) =>
  relative(ROOT, resolve(ROOT, dirname(from), specifier))
    .split(sep)
    .join("/");

/** The repository files `entry` needs at run time, itself included. */
function runTimeClosure(entry: string): { files: Set<string>; problems: string[] } {
  const files = new Set<string>();
  const problems: string[] = [];
  const visit = (path: string) => {
    if (files.has(path)) return;
    files.add(path);
    for (const { specifier, typeOnly } of importsOf(path)) {
      if (typeOnly) continue;
      if (!specifier.startsWith(".")) problems.push(`${path} imports "${specifier}" at run time`);
      else visit(resolved(path, specifier));
    }
  };
  visit(entry);
  return { files, problems };
}

/** Modules that hold schemas (and the builders and constants they are made of): nothing else. */
const SCHEMA_MODULE =
  /^src\/(apimachinery\/schema-builders|apimachinery\/types|apis\/.+-schema|apis\/[\w/]+\/common|config\/schema[\w-]*|config\/redaction-marker)\.ts$/;

/** A kind's object type written out by hand: an interface over the object envelope. */
const HAND_WRITTEN_KIND = /\binterface\s+(\w+)(?:<[^>]*>)?\s+extends\s+(?:[\w.]+\.)?KubeObject\b/g;

describe("derived kind types", () => {
  const apiFiles = filesUnder("src/apis", [".ts"]);
  const consoleFiles = filesUnder("console/src", [".ts", ".tsx"]);

  it("no API definition writes a kind's type by hand", () => {
    const found = apiFiles.flatMap((path) =>
      [...read(path).matchAll(HAND_WRITTEN_KIND)].map((match) => `${path}: ${match[1]}`),
    );
    assert.deepEqual(found, [], "derive the type from the kind's schema: KindOf<typeof schema>");
  });

  it("defineResource() takes no type of its own: the schema gives it", () => {
    const found = apiFiles.filter((path) => /\bdefineResource</.test(read(path)));
    assert.deepEqual(found, []);
  });

  it("the console declares no kind of its own", () => {
    const found = consoleFiles.flatMap((path) =>
      [...read(path).matchAll(HAND_WRITTEN_KIND)].map((match) => `${path}: ${match[1]}`),
    );
    assert.deepEqual(found, [], "import the kind's type through console/src/lib/kube.ts");
  });

  it("console/src/lib/kube.ts takes the kinds from their schema modules", () => {
    const kinds = importsOf("console/src/lib/kube.ts").map(({ specifier }) =>
      resolved("console/src/lib/kube.ts", specifier),
    );
    for (const schema of [
      "src/apis/management/v1/user-schema.ts",
      "src/apis/management/v1/team-schema.ts",
      "src/apis/management/v1/project-schema.ts",
      "src/apis/management/v1/virtualclusterinstance-schema.ts",
      "src/apis/management/v1/ownedaccesskey-schema.ts",
      "src/apis/management/v1/cluster-schema.ts",
      "src/apis/management/v1/self-schema.ts",
    ]) {
      assert.ok(kinds.includes(schema), `kube.ts re-exports the types of ${schema}`);
    }
  });

  it("what the console imports from src/ needs no node: built-in and no package at run time", () => {
    const fromConsole = consoleFiles.flatMap((path) =>
      importsOf(path)
        .filter(({ specifier }) => specifier.startsWith("."))
        .map(({ specifier }) => resolved(path, specifier))
        .filter((target) => target.startsWith("src/")),
    );
    assert.ok(fromConsole.length > 0, "the console imports the platform's types");
    for (const entry of new Set(fromConsole)) {
      assert.ok(existsSync(join(ROOT, entry)), `${entry} exists`);
      assert.deepEqual(runTimeClosure(entry).problems, [], `${entry} runs in a browser`);
    }
  });

  it("every schema module needs only schema modules at run time", () => {
    const schemaModules = apiFiles.filter((path) => path.endsWith("-schema.ts"));
    assert.ok(schemaModules.length >= 10, "the kinds' schemas live in schema modules");
    for (const entry of schemaModules) {
      const { files, problems } = runTimeClosure(entry);
      assert.deepEqual(problems, [], `${entry} runs in a browser`);
      for (const file of files) assert.match(file, SCHEMA_MODULE, `${entry} reaches ${file} at run time`);
    }
  });
});
