// The README.md of a chart archive (a gzipped tar whose top folder is the chart): read from the archive's entries
// without unpacking it. Sizes are bounded: the archive by the fetch, the unpacked bytes here, the readme below.

import { gunzipSync } from "node:zlib";
import { trimEndChar } from "../utils/trim-char.ts";

const BLOCK = 512;
export const MAX_UNPACKED_BYTES = 64 * 1024 * 1024;
export const MAX_README_BYTES = 512 * 1024;

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString("utf8");
}

/** The text of `<top folder>/README.md` (any case), or undefined when the archive has none. */
export function readmeOfChartArchive(archive: Buffer): string | undefined {
  const tar = gunzipSync(archive, { maxOutputLength: MAX_UNPACKED_BYTES });
  let offset = 0;
  let longName: string | undefined;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    const body = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    longName = undefined;
    if (type === "L") longName = trimEndChar(body.toString("utf8"), "\0");
    else if ((type === "0" || type === "\0") && /^[^/]+\/readme\.md$/i.test(name)) {
      return body.subarray(0, MAX_README_BYTES).toString("utf8");
    }
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return undefined;
}
