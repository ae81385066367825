// A streaming HTTP/1.1 response parser for the runtime's kept-alive connections to an API server
// (kept-alive-connections.ts): status line and headers, then the body by its framing (RFC 9112 §6.3: none for HEAD,
// 1xx, 204 and 304; chunked when Transfer-Encoding ends in chunked; Content-Length; else until the connection
// closes), de-chunked. Everything it keeps is bounded (head, chunk-size lines, trailers); anything malformed —
// obsolete line folding, conflicting lengths, a bad chunk size, bytes after the answer — is an error, and the
// connection is not reused.

export type ResponseHeaders = Record<string, string | string[]>;

export interface ResponseHead {
  status: number;
  /** Names lower-cased; repeated headers joined with ", " (set-cookie kept as a list). */
  headers: ResponseHeaders;
}

export interface ResponseHandlers {
  /** A final (non-1xx) answer's head. */
  head(head: ResponseHead): void;
  body(chunk: Buffer): void;
  /** The answer is complete; `reusable`: the connection may carry the next request. */
  end(reusable: boolean): void;
}

export class ResponseParseError extends Error {}

export const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 4096;
const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [\t\x20-\x7e\x80-\xff]*)?$/;
// The value with the whitespace around it, trimmed after the match: one quantifier per part keeps the match linear in
// the line's length (whitespace quantifiers beside the value's made it backtrack, and cost twice as much per line).
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):([\t\x20-\x7e\x80-\xff]*)$/;
const CHUNK_SIZE = /^([0-9a-fA-F]{1,12})[\t ]*(?:;[\t\x20-\x7e\x80-\xff]*)?$/;

type State =
  | { kind: "head" }
  | { kind: "length"; left: number }
  | { kind: "chunk-size" }
  | { kind: "chunk-data"; left: number }
  | { kind: "chunk-end" }
  | { kind: "trailers"; bytes: number }
  | { kind: "until-close" }
  | { kind: "done" };

const isOptionalWhitespace = (code: number) => code === 0x20 || code === 0x09;

/** A header value without the optional whitespace around it (RFC 9110 §5.5). */
function trimmedValue(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOptionalWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isOptionalWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function parseHead(text: string): { status: number; headers: ResponseHeaders; minor: number } {
  const lines = text.split("\r\n");
  const status = STATUS_LINE.exec(lines[0]);
  if (!status) throw new ResponseParseError("malformed status line");
  const headers: ResponseHeaders = {};
  for (let i = 1; i < lines.length; i++) {
    const line = HEADER_LINE.exec(lines[i]);
    if (!line) throw new ResponseParseError("malformed header line");
    const name = line[1].toLowerCase();
    const value = trimmedValue(line[2]);
    const before = headers[name];
    if (name === "set-cookie") headers[name] = [...((before as string[] | undefined) ?? []), value];
    else if (name === "content-length" && before !== undefined && before !== value) {
      throw new ResponseParseError("conflicting content-length headers");
    } else headers[name] = before === undefined || name === "content-length" ? value : `${before}, ${value}`;
  }
  return { status: Number(status[2]), headers, minor: Number(status[1]) };
}

const tokens = (value: string | string[] | undefined) =>
  String(value ?? "")
    .toLowerCase()
    .split(",")
    .map((token) => token.trim());

export class ResponseParser {
  readonly #handlers: ResponseHandlers;
  readonly #head: boolean;
  #state: State = { kind: "head" };
  #pending: Buffer = Buffer.alloc(0);
  #reusable = false;

  /** `method`: the request's (a HEAD request's answer has no body). */
  constructor(method: string, handlers: ResponseHandlers) {
    this.#handlers = handlers;
    this.#head = method === "HEAD";
  }

  get done(): boolean {
    return this.#state.kind === "done";
  }

  /** Whether any byte of an answer arrived. */
  get started(): boolean {
    return this.#state.kind !== "head" || this.#pending.length > 0;
  }

  /** Feeds bytes from the connection; throws ResponseParseError on a malformed answer. */
  execute(chunk: Buffer): void {
    let data = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    this.#pending = Buffer.alloc(0);
    while (data.length > 0) {
      if (this.#state.kind === "done") throw new ResponseParseError("bytes after the end of the answer");
      const used = this.#step(data);
      if (used < 0) {
        this.#pending = data; // an incomplete line: wait for more
        return;
      }
      data = data.subarray(used);
    }
  }

  /** The connection ended: completes an answer read until close, else the answer was cut short. */
  finish(): void {
    if (this.#state.kind === "done") return;
    if (this.#state.kind !== "until-close") throw new ResponseParseError("the connection closed mid-answer");
    this.#complete(false);
  }

  #complete(reusable: boolean): void {
    this.#state = { kind: "done" };
    this.#handlers.end(reusable && this.#reusable);
  }

  /** Consumes from `data`; returns the bytes used, or -1 when a line is incomplete. */
  #step(data: Buffer): number {
    const state = this.#state;
    switch (state.kind) {
      case "head":
        return this.#readHead(data);
      case "length":
      case "chunk-data": {
        const take = Math.min(state.left, data.length);
        this.#handlers.body(data.subarray(0, take));
        state.left -= take;
        if (state.left === 0) {
          if (state.kind === "length") this.#complete(true);
          else this.#state = { kind: "chunk-end" };
        }
        return take;
      }
      case "chunk-end": {
        if (data.length < 2) return -1;
        if (data[0] !== 13 || data[1] !== 10) throw new ResponseParseError("a chunk does not end with CRLF");
        this.#state = { kind: "chunk-size" };
        return 2;
      }
      case "chunk-size": {
        const line = this.#line(data, MAX_LINE_BYTES);
        if (line === undefined) return -1;
        const size = CHUNK_SIZE.exec(line.text);
        if (!size) throw new ResponseParseError("malformed chunk size");
        const left = Number.parseInt(size[1], 16);
        this.#state = left === 0 ? { kind: "trailers", bytes: 0 } : { kind: "chunk-data", left };
        return line.used;
      }
      case "trailers": {
        const line = this.#line(data, MAX_HEAD_BYTES - state.bytes);
        if (line === undefined) return -1;
        state.bytes += line.used;
        if (line.text === "") this.#complete(true);
        else if (!HEADER_LINE.test(line.text)) throw new ResponseParseError("malformed trailer");
        return line.used;
      }
      case "until-close":
        this.#handlers.body(data);
        return data.length;
      case "done":
        throw new ResponseParseError("bytes after the end of the answer");
    }
  }

  /** A CRLF-terminated line at the start of `data` (bounded), or undefined while incomplete. */
  #line(data: Buffer, max: number): { text: string; used: number } | undefined {
    const end = data.indexOf(CRLF);
    if (end === -1) {
      if (data.length > max) throw new ResponseParseError("line too long");
      return undefined;
    }
    if (end > max) throw new ResponseParseError("line too long");
    return { text: data.toString("latin1", 0, end), used: end + 2 };
  }

  #readHead(data: Buffer): number {
    const end = data.indexOf(HEAD_END);
    if (end === -1) {
      if (data.length > MAX_HEAD_BYTES) throw new ResponseParseError("response head too large");
      return -1;
    }
    if (end + 4 > MAX_HEAD_BYTES) throw new ResponseParseError("response head too large");
    const { status, headers, minor } = parseHead(data.toString("latin1", 0, end));
    if (status === 101) throw new ResponseParseError("unexpected switch of protocols");
    if (status < 200) return end + 4; // an interim answer (100 Continue, 103): the final one follows
    const connection = tokens(headers.connection);
    this.#reusable = minor === 1 ? !connection.includes("close") : connection.includes("keep-alive");
    this.#handlers.head({ status, headers });
    const transfer = headers["transfer-encoding"];
    const length = headers["content-length"] as string | undefined;
    // Both framings at once (a smuggling attempt, or a broken intermediary): read by the chunked one, then close.
    if (transfer !== undefined && length !== undefined) this.#reusable = false;
    if (this.#head || status === 204 || status === 304) this.#complete(true);
    else if (transfer !== undefined) {
      if (tokens(transfer).at(-1) === "chunked") this.#state = { kind: "chunk-size" };
      else this.#state = { kind: "until-close" };
    } else if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new ResponseParseError("malformed content-length");
      const left = Number(length);
      if (left === 0) this.#complete(true);
      else this.#state = { kind: "length", left };
    } else this.#state = { kind: "until-close" };
    return end + 4;
  }
}
