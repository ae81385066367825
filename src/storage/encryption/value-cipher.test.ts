import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  ENCRYPTED_VALUE_PREFIX,
  encryptionKeyId,
  isEncryptedValue,
  sealingKeyId,
  ValueCipher,
  ValueDecryptionError,
} from "./value-cipher.ts";

const KEY = "/internal/passwords/alice";

describe("ValueCipher", () => {
  it("seal() then open() gives back any text, and the sealed form never contains it", () => {
    const cipher = new ValueCipher([randomBytes(32)]);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), fc.string({ minLength: 1 }), (text, key) => {
        const sealed = cipher.seal(key, text);
        assert.ok(isEncryptedValue(sealed));
        assert.equal(sealingKeyId(sealed), cipher.primaryKeyId);
        if (text.length >= 8) assert.ok(!sealed.includes(text));
        assert.equal(cipher.open(key, sealed), text);
      }),
    );
  });

  it("seal() uses a fresh nonce: the same value sealed twice differs", () => {
    const cipher = new ValueCipher([randomBytes(32)]);
    assert.notEqual(cipher.seal(KEY, "secret"), cipher.seal(KEY, "secret"));
  });

  it("open() refuses a value sealed for another storage key (it cannot be moved between keys)", () => {
    const cipher = new ValueCipher([randomBytes(32)]);
    const sealed = cipher.seal(KEY, '{"hash":"x"}');
    assert.throws(() => cipher.open("/internal/passwords/mallory", sealed), /failed authentication/);
  });

  it("open() refuses any changed byte, naming the storage key but not the value", () => {
    const cipher = new ValueCipher([randomBytes(32)]);
    const sealed = cipher.seal(KEY, "top secret value");
    const body = sealed.length - 10;
    const flipped = sealed.slice(0, body) + (sealed[body] === "A" ? "B" : "A") + sealed.slice(body + 1);
    const error = assertDecryptionError(() => cipher.open(KEY, flipped));
    assert.match(error.message, /\/internal\/passwords\/alice/);
    assert.ok(!error.message.includes("top secret"));
    assertDecryptionError(() => cipher.open(KEY, sealed.slice(0, ENCRYPTED_VALUE_PREFIX.length + 20)));
  });

  it("open() refuses plain values and values of keys it does not hold, naming the key id", () => {
    const cipher = new ValueCipher([randomBytes(32)]);
    assert.throws(() => cipher.open(KEY, '{"plain":true}'), /is not encrypted/);
    const other = new ValueCipher([randomBytes(32)]);
    const error = assertDecryptionError(() => cipher.open(KEY, other.seal(KEY, "x")));
    assert.equal(error.keyId, other.primaryKeyId);
    assert.match(error.message, new RegExp(`encrypted with key ${other.primaryKeyId}`));
  });

  it("seals with the first key and opens with every key it holds", () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = new ValueCipher([oldKey]).seal(KEY, "v1");
    const during = new ValueCipher([newKey, oldKey]);
    assert.equal(during.open(KEY, before), "v1");
    assert.equal(sealingKeyId(during.seal(KEY, "v2")), encryptionKeyId(newKey));
    assert.deepEqual(during.keyIds, [encryptionKeyId(newKey), encryptionKeyId(oldKey)]);
  });

  it("encryptionKeyId() is stable for a key and different across keys", () => {
    const key = randomBytes(32);
    assert.equal(encryptionKeyId(key), encryptionKeyId(Buffer.from(key)));
    assert.notEqual(encryptionKeyId(key), encryptionKeyId(randomBytes(32)));
    assert.match(encryptionKeyId(key), /^k[0-9a-f]{12}$/);
  });

  it("refuses keys that are not 32 bytes", () => {
    assert.throws(() => new ValueCipher([randomBytes(16)]), /32 bytes/);
    assert.throws(() => new ValueCipher([]), /at least one/);
  });
});

function assertDecryptionError(run: () => unknown): ValueDecryptionError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ValueDecryptionError, String(error));
    return error;
  }
  assert.fail("expected ValueDecryptionError");
}
