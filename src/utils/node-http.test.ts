import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { test } from "node:test";
import { http } from "./node-http.ts";

const SRC = resolve(import.meta.dirname, "..");

/** Whether a fresh Node process that runs `code` (an ES module) has loaded Node's fetch implementation. */
function loadsUndici(code: string): boolean {
  const script = `${code}; console.log(process.moduleLoadList.some((m) => m.includes("undici")));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: SRC, encoding: "utf8" });
  return out.trim() === "true";
}

test("http is node:http's own exports", () => {
  assert.equal(http.request, process.getBuiltinModule("node:http").request);
  assert.equal(typeof http.createServer, "function");
});

test("http does not load Node's fetch implementation, which an ECMAScript import of node:http does", () => {
  assert.equal(loadsUndici(`import { http } from "./utils/node-http.ts"; http.request;`), false);
  assert.equal(loadsUndici(`import { request } from "node:http"; request;`), true);
});

test("no source file outside tests imports a value from node:http (types only; values come from node-http.ts)", () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !entry.name.startsWith("testing-")) {
        const text = readFileSync(path, "utf8");
        for (const match of text.matchAll(/^import\s+(?!type\b)([^;]*?)\s+from\s+["'](?:node:)?http["']/gm)) {
          const named = /^\{([^}]*)\}$/.exec(match[1].trim());
          const values = named ? named[1].split(",").filter((s) => s.trim() && !s.trim().startsWith("type ")) : [1];
          if (values.length > 0) offenders.push(relative(SRC, path));
        }
      }
    }
  };
  walk(SRC);
  assert.deepEqual(offenders, []);
});
