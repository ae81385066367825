// State a browser carries for the server (a login in progress, an authorization request waiting for a login), sealed
// so the browser can neither read nor change it: AES-256-GCM under a key derived with HKDF-SHA256 from one of the
// server's secrets, a fresh random salt per seal (so no key ever meets the GCM nonce bound however many seals an
// unauthenticated flood asks for), the purpose and what the value is bound to (a login's state, an artifact's id)
// as additional data, and an expiry inside. Every replica holding the same secrets opens what another sealed; the
// server keeps nothing.
//
// A sealed value is text safe in a cookie: "v1." + base64url(salt 16 ‖ nonce 12 ‖ ciphertext ‖ tag 16).
//
// Keys are KeyObjects, the secrets made once and each derived key at once: node:crypto turns a Buffer key into a
// KeyObject on every use, which made a seal cost about three times its crypto (an unauthenticated login start
// seals once; issue 30's login storm spent a tenth of the request thread there).

import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, type KeyObject, randomBytes } from "node:crypto";

const VERSION = "v1.";
const SALT_BYTES = 16;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

interface Envelope<T> {
  /** Expiry, epoch milliseconds. */
  e: number;
  v: T;
}

export interface SealedBoxOptions {
  /** Secrets (at least 32 bytes of entropy each, any encoding): the first seals, every one opens. */
  secrets: readonly string[];
  /** What the box is for; a value sealed for one purpose never opens for another. */
  purpose: string;
  now?: () => number;
}

export class SealedBox {
  readonly #secrets: KeyObject[];
  readonly #purpose: string;
  readonly #now: () => number;

  constructor(options: SealedBoxOptions) {
    if (options.secrets.length === 0) throw new Error("a sealed box needs at least one secret");
    this.#secrets = options.secrets.map((secret) => createSecretKey(Buffer.from(secret, "utf8")));
    this.#purpose = options.purpose;
    this.#now = options.now ?? Date.now;
  }

  /** `value` (JSON), readable only by open() with the same `binding` until `expiresAtMs`. */
  seal(value: unknown, binding: string, expiresAtMs: number): string {
    const random = randomBytes(SALT_BYTES + NONCE_BYTES);
    const salt = random.subarray(0, SALT_BYTES);
    const nonce = random.subarray(SALT_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key(this.#secrets[0], salt), nonce);
    cipher.setAAD(this.#additionalData(binding));
    const envelope: Envelope<unknown> = { e: expiresAtMs, v: value };
    const body = Buffer.concat([cipher.update(JSON.stringify(envelope), "utf8"), cipher.final()]);
    return VERSION + Buffer.concat([random, body, cipher.getAuthTag()]).toString("base64url");
  }

  /** The value sealed with this `binding`; undefined when it was not sealed so, was changed, or has expired. */
  open<T>(sealed: string | undefined, binding: string): T | undefined {
    if (!sealed?.startsWith(VERSION)) return undefined;
    const text = sealed.slice(VERSION.length);
    const raw = Buffer.from(text, "base64url");
    // Only the one encoding seal() writes (the decoder would skip stray characters and unused bits).
    if (raw.length < SALT_BYTES + NONCE_BYTES + TAG_BYTES || raw.toString("base64url") !== text) return undefined;
    const salt = raw.subarray(0, SALT_BYTES);
    const nonce = raw.subarray(SALT_BYTES, SALT_BYTES + NONCE_BYTES);
    const body = raw.subarray(SALT_BYTES + NONCE_BYTES, raw.length - TAG_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    for (const secret of this.#secrets) {
      const envelope = this.#decrypt<T>(secret, salt, nonce, body, tag, binding);
      if (envelope) return envelope.e > this.#now() ? envelope.v : undefined;
    }
    return undefined;
  }

  #decrypt<T>(
    secret: KeyObject,
    salt: Buffer,
    nonce: Buffer,
    body: Buffer,
    tag: Buffer,
    binding: string,
  ): Envelope<T> | undefined {
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key(secret, salt), nonce);
      decipher.setAAD(this.#additionalData(binding));
      decipher.setAuthTag(tag);
      const text = Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
      const envelope = JSON.parse(text) as Envelope<T>;
      return typeof envelope?.e === "number" ? envelope : undefined;
    } catch {
      return undefined;
    }
  }

  #key(secret: KeyObject, salt: Buffer): KeyObject {
    return createSecretKey(
      Buffer.from(hkdfSync("sha256", secret, salt, `virtualcluster-platform sealed ${this.#purpose}`, KEY_BYTES)),
    );
  }

  #additionalData(binding: string): Buffer {
    return Buffer.from(`${this.#purpose}\u0000${binding}`, "utf8");
  }
}
