import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { compareUtf8 } from "./utf8-compare.ts";

const utf8 = (s: string) => Buffer.from(s, "utf8");
/** Code points at the edges of UTF-8's 1-4 byte forms and of the surrogate range, and any other code point. */
const edge = fc.constantFrom("a", "\x7f", "\x80", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\ufffd", "\uffff");
const astral = fc.constantFrom("\u{10000}", "\u{1F600}", "\u{10FFFF}");
const codePoint = fc.oneof(edge, astral, fc.string({ unit: "binary", minLength: 1, maxLength: 1 }));
const wellFormed = fc.string({ unit: codePoint, maxLength: 8 });
/** Any UTF-16 text, lone surrogates included. */
const units = fc.array(fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff })), {
  maxLength: 6,
});

test("compareUtf8() orders well-formed strings like their UTF-8 bytes", () => {
  fc.assert(
    fc.property(wellFormed, wellFormed, (a, b) => {
      assert.equal(Math.sign(compareUtf8(a, b)), Math.sign(Buffer.compare(utf8(a), utf8(b))));
    }),
  );
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", maxLength: 8 }),
      fc.string({ unit: "grapheme", maxLength: 8 }),
      (a, b) => {
        assert.equal(Math.sign(compareUtf8(a, b)), Math.sign(Buffer.compare(utf8(a), utf8(b))));
      },
    ),
  );
  assert.ok(compareUtf8("\u{1F600}", "\uFFFD") > 0, "a surrogate pair sorts after the top of the BMP");
  assert.ok(compareUtf8("\uE000", "\u{10000}") < 0, "where UTF-16 order would say the opposite");
});

test("compareUtf8() sorts a lone surrogate as the start of a pair: after every other BMP unit", () => {
  // Buffer.from would turn lone surrogates into U+FFFD; the order compares units, surrogates lifted above U+FFFF.
  const lifted = (u: number) => (u >= 0xd800 && u <= 0xdfff ? u + 0x10000 : u);
  const model = (a: number[], b: number[]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return lifted(a[i]) - lifted(b[i]);
    }
    return a.length - b.length;
  };
  fc.assert(
    fc.property(units, units, (a, b) => {
      const text = (u: number[]) => String.fromCharCode(...u);
      assert.equal(Math.sign(compareUtf8(text(a), text(b))), Math.sign(model(a, b)));
    }),
  );
  assert.ok(compareUtf8("\uD800", "\uFFFF") > 0);
  assert.ok(compareUtf8("\uDC00", "\uD800\uDC00") > 0);
  assert.ok(compareUtf8("x\uDFFF", "x\uE000") > 0);
});

test("compareUtf8() is zero only for equal strings, and antisymmetric", () => {
  fc.assert(
    fc.property(wellFormed, wellFormed, (a, b) => {
      assert.equal(compareUtf8(a, b) === 0, a === b);
      assert.equal(Math.sign(compareUtf8(a, b)) + Math.sign(compareUtf8(b, a)), 0);
    }),
  );
});
