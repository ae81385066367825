// The layers of src/ as docs/architecture.md draws them, held against the imports of the code. Each top-level
// folder is a layer; a file may import only from its own layer or one listed before it. Inside the tree no two
// folders may import each other, directly or round a loop. Test helpers (shared suites and fixtures that tests
// import) stay out of production code and out of dist/.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";

/** Lowest first. Adding a top-level folder to src/ means placing it here and in docs/architecture.md. */
const LAYERS = [
  "utils",
  "storage",
  "apimachinery",
  "pki",
  "registry",
  "auth",
  "config",
  "apis",
  "http",
  "audit",
  "identity",
  "platform",
  "cluster-apiserver",
  "virtualcluster",
  "agent",
  "cli",
];

const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

interface SourceFile {
  /** Path relative to the repository root, with "/". */
  path: string;
  text: string;
}

function sourceFiles(dir: string): SourceFile[] {
  const out: SourceFile[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith(".ts"))
      out.push({ path: relative(ROOT, full).split(sep).join("/"), text: readFileSync(full, "utf8") });
  }
  return out;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** The repository-relative paths a file imports (relative specifiers only: packages are not layers). */
function importsOf(file: SourceFile): string[] {
  return [...file.text.matchAll(IMPORT)].map((match) =>
    relative(ROOT, resolve(ROOT, dirname(file.path), match[1]))
      .split(sep)
      .join("/"),
  );
}

const isTest = (path: string) => path.endsWith(".test.ts");
const HELPER_NAME = /(?:^|\/)(?:testing(?:-[\w-]+)?|[\w-]+-testing|conformance(?:-[\w-]+)?)\.ts$/;
/** Shared test suites and fixtures: named so, or built on node:test. */
const isTestHelper = (file: SourceFile) =>
  !isTest(file.path) && (HELPER_NAME.test(file.path) || /["']node:test["']/.test(file.text));
const layerOf = (path: string) => path.split("/")[1];

const files = sourceFiles(SRC);
const production = files.filter((file) => !isTest(file.path));

describe("layers", () => {
  it("every top-level folder of src/ is a layer", () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    assert.deepEqual(folders, [...LAYERS].sort());
  });

  it("no file imports from a layer above its own", () => {
    const upward: string[] = [];
    for (const file of production) {
      const from = LAYERS.indexOf(layerOf(file.path));
      for (const target of importsOf(file)) {
        if (!target.startsWith("src/")) continue;
        if (LAYERS.indexOf(layerOf(target)) > from) upward.push(`${file.path} -> ${target}`);
      }
    }
    assert.deepEqual(upward, [], "upward imports");
  });

  it("no folders import each other, directly or round a loop", () => {
    const edges = new Map<string, Set<string>>();
    for (const file of production) {
      for (const target of importsOf(file)) {
        const from = dirname(file.path);
        const to = dirname(target);
        if (!target.startsWith("src/") || from === to) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)?.add(to);
      }
    }
    assert.deepEqual(folderLoops(edges), [], "folder loops");
  });

  it("production code never imports a test or a test helper", () => {
    const helpers = new Set(files.filter(isTestHelper).map((file) => file.path));
    const offending: string[] = [];
    for (const file of production) {
      if (helpers.has(file.path)) continue;
      for (const target of importsOf(file)) {
        if (helpers.has(target) || isTest(target)) offending.push(`${file.path} -> ${target}`);
      }
    }
    assert.deepEqual(offending, []);
  });

  it("the build leaves tests and test helpers out of dist/", () => {
    const build = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8")) as { exclude: string[] };
    const excluded = build.exclude.map(globToRegExp);
    const shipped = files
      .filter((file) => isTest(file.path) || isTestHelper(file))
      .filter((file) => !excluded.some((pattern) => pattern.test(file.path)))
      .map((file) => file.path);
    assert.deepEqual(shipped, []);
  });

  it("docs/architecture.md lists the layers in this order", () => {
    const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
    const table = doc.slice(doc.indexOf("## Layers"), doc.indexOf("\n## ", doc.indexOf("## Layers") + 1));
    const documented = [...table.matchAll(/^\|[^|]*\|\s*`src\/([\w-]+)\/[^`]*`/gm)].map((match) => match[1]);
    assert.deepEqual(documented, LAYERS);
  });
});

/** Each loop among folders, as its members sorted (Tarjan's strongly connected components of size > 1). */
function folderLoops(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    for (;;) {
      const member = stack.pop() as string;
      onStack.delete(member);
      members.push(member);
      if (member === node) break;
    }
    if (members.length > 1) loops.push(members.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return loops;
}

/** tsconfig's glob subset: `**` any folders, `*` within one name. */
function globToRegExp(glob: string): RegExp {
  const source = glob
    .split("/")
    .map((part) =>
      part === "**" ? "(?:.*/)?" : `${part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}/`,
    )
    .join("")
    .replace(/\/$/, "");
  return new RegExp(`^${source}$`);
}
