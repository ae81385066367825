// The built web console (dist/console, made by `npm run build`, which `npm install` runs): every file read once at
// start into memory, text files gzipped, so a page or asset costs no disk read and no compression. The build writes
// each text file's gzip beside it (`<file>.gz`, precompressConsole()), which a start takes when its trailer matches
// the file (its length and CRC-32), so no start spends CPU compressing; a build without them is compressed at start.
// A gzipped file is held only gzipped (a third of the bytes): every browser accepts gzip, and the rare client that
// does not gets it inflated per request.

import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, gunzipSync, gzipSync } from "node:zlib";

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
const GZIP = ".gz";

/** Whether the platform serves a file gzipped: a text file larger than 1 KiB. */
function servedGzipped(path: string, size: number): boolean {
  return COMPRESSIBLE.has(extname(path).toLowerCase()) && size > 1024;
}

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

/** Writes `<file>.gz` beside every file the platform serves gzipped: the console's build runs it once. */
export async function precompressConsole(dir: string): Promise<void> {
  for (const path of await walk(dir)) {
    if (path.endsWith(GZIP)) continue;
    const body = await readFile(path);
    if (servedGzipped(path, body.length)) await writeFile(`${path}${GZIP}`, gzipSync(body, { level: 9 }));
  }
}

async function readConsoleFiles(dir: string | undefined): Promise<ConsoleFiles> {
  const files = new Map<string, ConsoleFile>();
  if (!dir || !existsSync(join(dir, "index.html"))) return { files };
  const index = await readFile(join(dir, "index.html"), "utf8");
  const built = new Set(await walk(dir));
  for (const path of built) {
    const name = `/${relative(dir, path).split(sep).join("/")}`;
    // A file's .gz is its gzipped copy, not a file of its own.
    if (name === "/index.html" || (path.endsWith(GZIP) && built.has(path.slice(0, -GZIP.length)))) continue;
    files.set(name, await consoleFile(path, built));
  }
  return { index, files, dir };
}

/** One file of the build, gzipped if served so: from its .gz when that holds this file, else compressed now. */
async function consoleFile(path: string, built: ReadonlySet<string>): Promise<ConsoleFile> {
  const body = await readFile(path);
  const contentType = TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
  if (!servedGzipped(path, body.length)) return { body, contentType };
  const prebuilt = built.has(`${path}${GZIP}`) ? await readFile(`${path}${GZIP}`) : undefined;
  return gzippedFile(prebuilt && gzipOf(prebuilt, body) ? prebuilt : gzipSync(body, { level: 9 }), contentType);
}

/** Whether `gzip`'s trailer (CRC-32 and length of what it holds) is that of `body`: a .gz from another build is not. */
function gzipOf(gzip: Buffer, body: Buffer): boolean {
  if (gzip.length < 18 || gzip[0] !== 0x1f || gzip[1] !== 0x8b) return false;
  return (
    gzip.readUInt32LE(gzip.length - 8) === crc32(body) && gzip.readUInt32LE(gzip.length - 4) === body.length % 2 ** 32
  );
}

function gzippedFile(gzip: Buffer, contentType: string): ConsoleFile {
  return {
    gzip,
    contentType,
    get body() {
      return gunzipSync(gzip);
    },
  };
}
