// A real `helm` for the tests, without network at test time: the devDependency @aws-cdk/asset-kubectl-v20 (2.1.4,
// Apache-2.0) ships a Lambda layer zip holding helm v3.8.1 for linux amd64. It is extracted once into a cache
// directory (node_modules/.cache/virtualcluster-helm) by reading the zip's central directory and inflating the one
// entry; tests skip, saying so, on another platform or without the package.

import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";

const PACKAGE = "@aws-cdk/asset-kubectl-v20";
const ENTRY = "helm/helm";
const CACHE = new URL("../../node_modules/.cache/virtualcluster-helm/", import.meta.url).pathname;

function layerZip(): string | undefined {
  try {
    const main = createRequire(import.meta.url).resolve(PACKAGE);
    const zip = join(dirname(main), "layer.zip");
    return existsSync(zip) ? zip : undefined;
  } catch {
    return undefined;
  }
}

export const helmSkip =
  process.platform !== "linux" || process.arch !== "x64"
    ? `the helm of ${PACKAGE} is for linux x64 (this is ${process.platform} ${process.arch})`
    : layerZip()
      ? false
      : `${PACKAGE} is not installed (npm install)`;

/** One file of a zip archive (stored or deflated), found through the central directory. */
export function unzipEntry(zip: Buffer, name: string): Buffer {
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error("not a zip archive: no end of central directory");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("corrupt zip central directory");
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const entry = zip.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entry !== name) continue;
    const data = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(data, data + compressed);
    const body = method === 0 ? raw : method === 8 ? inflateRawSync(raw) : undefined;
    if (!body) throw new Error(`zip entry ${name} uses compression method ${method}`);
    if (body.length !== size) throw new Error(`zip entry ${name}: ${body.length} bytes, expected ${size}`);
    return body;
  }
  throw new Error(`zip archive has no ${name}`);
}

let extracted: Promise<string> | undefined;

/** The path of helm, extracted on first use (concurrent test files each write their own temp file, then rename). */
export function helmBinary(): Promise<string> {
  extracted ??= (async () => {
    const target = join(CACHE, "helm");
    if (existsSync(target)) return target;
    const zip = layerZip();
    if (!zip) throw new Error(String(helmSkip));
    await mkdir(CACHE, { recursive: true });
    const temp = `${target}.${process.pid}`;
    await writeFile(temp, unzipEntry(readFileSync(zip), ENTRY));
    await chmod(temp, 0o755);
    await rename(temp, target);
    return target;
  })();
  return extracted;
}
