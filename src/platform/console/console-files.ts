// The built web console (dist/console, made by `npm run build`, which `npm install` runs): every file read once at
// start into memory, text files gzipped once, so a page or asset costs no disk read and no compression. A gzipped
// file is held only gzipped (a third of the bytes): every browser accepts gzip, and the rare client that does not
// gets it inflated per request.

import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";

export interface ConsoleFile {
  /** The file as built (for a gzipped file, inflated on each read). */
  readonly body: Buffer;
  gzip?: Buffer;
  contentType: string;
}

export interface ConsoleFiles {
  /** index.html as built (the page template), or undefined when the console is not built. */
  index?: string;
  /** "/assets/index-abc.js" -> file. */
  files: Map<string, ConsoleFile>;
  dir?: string;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".ttf": "font/ttf",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};
const COMPRESSIBLE = new Set([".js", ".css", ".html", ".svg", ".json", ".txt", ".ttf"]);

/** Where the build is: beside the compiled code (dist/platform/console -> dist/console) or from the sources. */
export function defaultConsoleDir(): string | undefined {
  const candidates = [new URL("../../console/", import.meta.url), new URL("../../../dist/console/", import.meta.url)];
  for (const candidate of candidates) {
    const dir = fileURLToPath(candidate);
    if (existsSync(join(dir, "index.html"))) return dir;
  }
  return undefined;
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/**
 * Reads the build. A build that is being replaced meanwhile (its files vanish under the walk) is read again, a few
 * times; then the console counts as not built, which the platform serves as a page saying so.
 */
export async function loadConsoleFiles(dir: string | undefined, attempts = 5): Promise<ConsoleFiles> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readConsoleFiles(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= attempts) return { files: new Map() };
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

async function readConsoleFiles(dir: string | undefined): Promise<ConsoleFiles> {
  const files = new Map<string, ConsoleFile>();
  if (!dir || !existsSync(join(dir, "index.html"))) return { files };
  const index = await readFile(join(dir, "index.html"), "utf8");
  for (const path of await walk(dir)) {
    const name = `/${relative(dir, path).split(sep).join("/")}`;
    if (name === "/index.html") continue;
    const extension = extname(path).toLowerCase();
    const body = await readFile(path);
    const contentType = TYPES[extension] ?? "application/octet-stream";
    files.set(
      name,
      COMPRESSIBLE.has(extension) && body.length > 1024 ? gzippedFile(body, contentType) : { body, contentType },
    );
  }
  return { index, files, dir };
}

function gzippedFile(body: Buffer, contentType: string): ConsoleFile {
  const gzip = gzipSync(body, { level: 9 });
  return {
    gzip,
    contentType,
    get body() {
      return gunzipSync(gzip);
    },
  };
}
