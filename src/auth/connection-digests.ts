// The digest of the bearer token a connection presented last. A keep-alive client (kubectl, client-node, a CI job)
// sends the same token on every request; remembering its digest per connection skips the SHA-256, a native call
// that under TLS load costs more than the rest of authentication together. The token is kept only while its
// connection lives (the connection's buffers held it anyway) and compared in constant time.

export class ConnectionDigests {
  readonly #digestOf: (token: string) => string;
  readonly #last = new WeakMap<object, { token: string; digest: string }>();

  constructor(digestOf: (token: string) => string) {
    this.#digestOf = digestOf;
  }

  /** digestOf(token), reused when `connection` presented the same token last; no connection: computed. */
  digest(token: string, connection: object | undefined): string {
    if (!connection) return this.#digestOf(token);
    const last = this.#last.get(connection);
    if (last && sameString(last.token, token)) return last.digest;
    const digest = this.#digestOf(token);
    this.#last.set(connection, { token, digest });
    return digest;
  }
}

/** Equality in time that depends only on the length (which a token's format makes public anyway). */
function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
