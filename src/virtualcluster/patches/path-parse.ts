// Patch path grammar (reference "Sync patches"): segments split by `.` outside quotes and brackets; `"` quotes;
// empty segments skipped; `[x]` is a bracket segment (`a[0]x` = a, [0], x); `*` or `[*]` fans out; integer
// segments index arrays. The empty path is the whole object.

/** One step of a path. Integer keys index arrays; on maps every key is a plain key. */
export type PathSegment = { kind: "wildcard" } | { kind: "key"; key: string; bracketed: boolean };

export class PatchPathError extends Error {
  readonly path: string;
  readonly offset: number;
  constructor(path: string, offset: number, reason: string) {
    super(`invalid path ${JSON.stringify(path)}: ${reason} at offset ${offset}`);
    this.name = "PatchPathError";
    this.path = path;
    this.offset = offset;
  }
}

/** Longest path accepted; paths are written by people, this only bounds work on hostile input. */
const MAX_PATH_LENGTH = 4096;

export function parsePatchPath(path: string): PathSegment[] {
  if (path.length > MAX_PATH_LENGTH) throw new PatchPathError(path, MAX_PATH_LENGTH, "path is too long");
  const segments: PathSegment[] = [];
  let text = "";
  let quoted = false; // some part of the current segment was quoted
  let quoteStart = -1; // offset of the open quote, -1 outside quotes
  let bracketStart = -1; // offset of the open bracket, -1 outside brackets

  const endPlain = () => {
    if (text === "" && !quoted) return;
    segments.push(text === "*" && !quoted ? { kind: "wildcard" } : { kind: "key", key: text, bracketed: false });
    text = "";
    quoted = false;
  };

  for (let i = 0; i < path.length; i++) {
    const char = path[i];
    if (quoteStart >= 0) {
      if (char === '"') quoteStart = -1;
      else text += char;
      continue;
    }
    if (char === '"') {
      quoteStart = i;
      quoted = true;
    } else if (bracketStart >= 0) {
      if (char === "[") throw new PatchPathError(path, i, 'nested "["');
      if (char === "]") {
        if (text === "" && !quoted) throw new PatchPathError(path, bracketStart, 'empty "[]"');
        segments.push(text === "*" && !quoted ? { kind: "wildcard" } : { kind: "key", key: text, bracketed: true });
        text = "";
        quoted = false;
        bracketStart = -1;
      } else {
        text += char;
      }
    } else if (char === ".") {
      endPlain();
    } else if (char === "[") {
      endPlain();
      bracketStart = i;
    } else if (char === "]") {
      throw new PatchPathError(path, i, 'unexpected "]" without "["');
    } else {
      text += char;
    }
  }
  if (quoteStart >= 0) throw new PatchPathError(path, quoteStart, "unclosed quote");
  if (bracketStart >= 0) throw new PatchPathError(path, bracketStart, 'unclosed "["');
  endPlain();
  return segments;
}

/** Canonical array index (`0`, `12`, not `01` or `-1`), or undefined. */
export function arrayIndex(key: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(key)) return undefined;
  const index = Number(key);
  return Number.isSafeInteger(index) ? index : undefined;
}
