import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MAX_HEAD_BYTES, type ResponseHead, ResponseParseError, ResponseParser } from "./response-parser.ts";

interface Parsed {
  head?: ResponseHead;
  body: Buffer[];
  ended?: { reusable: boolean };
}

/** Feeds `pieces` in turn (then the connection's end when `close`); what the parser reported. */
function parse(pieces: (string | Buffer)[], options: { method?: string; close?: boolean } = {}): Parsed {
  const parsed: Parsed = { body: [] };
  const parser = new ResponseParser(options.method ?? "GET", {
    head: (head) => {
      parsed.head = head;
    },
    body: (chunk) => parsed.body.push(Buffer.from(chunk)),
    end: (reusable) => {
      parsed.ended = { reusable };
    },
  });
  for (const piece of pieces) parser.execute(Buffer.from(piece));
  if (options.close) parser.finish();
  return parsed;
}

/** Splits `bytes` at the given cut points (fractions of its length). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((cut) => Math.floor(cut * bytes.length)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    if (cut > from) pieces.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  return pieces;
}

const headerName = fc.stringMatching(/^x-[a-z0-9-]{1,12}$/);
const headerValue = fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/);

describe("ResponseParser", () => {
  it("ResponseParser reads any status, headers and body, in any framing, cut anywhere", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 599 }).filter((status) => status !== 204 && status !== 304),
        fc.dictionary(headerName, headerValue, { maxKeys: 6 }),
        fc.uint8Array({ maxLength: 3000 }),
        fc.constantFrom("length", "chunked", "close"),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        (status, headers, body, framing, chunkSizes, cuts) => {
          const lines = [`HTTP/1.1 ${status} Whatever It Says`];
          for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
          let payload = Buffer.from(body);
          if (framing === "length") lines.push(`Content-Length: ${body.length}`);
          if (framing === "chunked") {
            lines.push("Transfer-Encoding: chunked");
            const parts: Buffer[] = [];
            for (let from = 0, i = 0; from < body.length; i++) {
              const size = chunkSizes[i % chunkSizes.length];
              const chunk = body.subarray(from, from + size);
              parts.push(
                Buffer.from(`${chunk.length.toString(16)};ext=1\r\n`),
                Buffer.from(chunk),
                Buffer.from("\r\n"),
              );
              from += size;
            }
            parts.push(Buffer.from("0\r\nx-trailer: t\r\n\r\n"));
            payload = Buffer.concat(parts);
          }
          const wire = Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), payload]);
          const parsed = parse(split(wire, cuts), { close: framing === "close" });
          assert.equal(parsed.head?.status, status);
          for (const [name, value] of Object.entries(headers)) assert.equal(parsed.head?.headers[name], value);
          assert.deepEqual(Buffer.concat(parsed.body), Buffer.from(body));
          assert.deepEqual(parsed.ended, { reusable: framing !== "close" });
        },
      ),
    );
  });

  it("ResponseParser never throws anything but a ResponseParseError, and keeps nothing unbounded", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 10 }), (pieces) => {
        const wire = [Buffer.from("HTTP/1.1 200 OK\r\n"), ...pieces.map((piece) => Buffer.from(piece))];
        try {
          parse(wire, { close: true });
        } catch (error) {
          assert.ok(error instanceof ResponseParseError, String(error));
        }
      }),
    );
  });

  it("ResponseParser skips interim answers and reads no body for HEAD, 204 and 304", () => {
    const interim = parse(["HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]);
    assert.equal(interim.head?.status, 200);
    assert.equal(Buffer.concat(interim.body).toString(), "ok");
    const head = parse(["HTTP/1.1 200 OK\r\ncontent-length: 20\r\n\r\n"], { method: "HEAD" });
    assert.deepEqual(head.ended, { reusable: true });
    for (const status of [204, 304]) {
      assert.deepEqual(parse([`HTTP/1.1 ${status} X\r\n\r\n`]).ended, { reusable: true });
    }
  });

  it("ResponseParser reads a header's value without the whitespace around it", () => {
    fc.assert(
      fc.property(
        headerValue,
        fc.stringMatching(/^[\t ]{0,4}$/),
        fc.stringMatching(/^[\t ]{0,4}$/),
        (value, before, after) => {
          const parsed = parse([`HTTP/1.1 200 OK\r\nx-value:${before}${value}${after}\r\ncontent-length: 0\r\n\r\n`]);
          assert.equal(parsed.head?.headers["x-value"], value);
        },
      ),
    );
    assert.equal(parse(["HTTP/1.1 200 OK\r\nx-empty: \t \r\ncontent-length: 0\r\n\r\n"]).head?.headers["x-empty"], "");
  });

  it("ResponseParser refuses a head-sized run of whitespace before a bad byte without backtracking through it", () => {
    // Quantifiers for the whitespace beside the value's made this line cost O(n³) steps (20,000 spaces: over 10 min).
    const line = `x-a:${" \t".repeat(30_000)}\u0001`;
    assert.throws(() => parse([`HTTP/1.1 200 OK\r\n${line}\r\n\r\n`]), ResponseParseError);
    const trailer = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\nx-t:${" ".repeat(3000)}\u0001\r\n\r\n`;
    assert.throws(() => parse([trailer]), ResponseParseError);
  });

  it("ResponseParser keeps repeated headers as Node does: set-cookie listed, others joined", () => {
    const parsed = parse([
      "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nWarning: one\r\nwarning: two\r\ncontent-length: 0\r\n\r\n",
    ]);
    assert.deepEqual(parsed.head?.headers["set-cookie"], ["a=1", "b=2"]);
    assert.equal(parsed.head?.headers.warning, "one, two");
  });

  it("ResponseParser says when the connection may not carry another request", () => {
    const close = parse(["HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"]);
    assert.deepEqual(close.ended, { reusable: false });
    const old = parse(["HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n"]);
    assert.deepEqual(old.ended, { reusable: false });
    const both = parse([
      "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    ]);
    assert.equal(Buffer.concat(both.body).toString(), "ok");
    assert.deepEqual(both.ended, { reusable: false });
  });

  it("ResponseParser refuses malformed answers", () => {
    const malformed = [
      ["HTTP/2 200 OK\r\n\r\n"],
      ["HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n"],
      ["HTTP/1.1 200 OK\r\nbad name: 1\r\n\r\n"],
      ["HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nx"],
      ["HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n"],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokX\r\n"],
      ["HTTP/1.1 101 Switching Protocols\r\n\r\n"],
      ["HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxy"],
      [`HTTP/1.1 200 OK\r\nx-big: ${"a".repeat(MAX_HEAD_BYTES)}`],
      ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n", "1".repeat(5000)],
    ];
    for (const pieces of malformed) {
      assert.throws(() => parse(pieces), ResponseParseError, JSON.stringify(pieces).slice(0, 80));
    }
    assert.throws(
      () => parse(["HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort"], { close: true }),
      /closed mid-answer/,
    );
  });
});
