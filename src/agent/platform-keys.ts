// The platform's token signing keys as the agent's direct endpoint verifies with them: the JWKS fetched from the
// platform the agent is connected to (at connect, in the background, and when a token names an unknown key), kept in
// <dir>/jwks.json so verification needs no platform at all — not even after an agent restart while the platform is
// down — and the token issuers the platform told the agent (its tunnel's 101 carries the current one), kept in
// <dir>/issuers.json: a platform whose address changed still has its earlier tokens accepted until they expire.
// The verifier (and jose with it) loads with the first token: an agent nobody reaches directly never needs it.

import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import type { Logger } from "pino";
import type { TokenVerifier, VerifiedToken } from "../identity/token-verifier.ts";

const MAX_ISSUERS = 8;
const MAX_JWKS_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

export interface PlatformAddress {
  url: string;
  caPem?: string;
  insecure: boolean;
}

function fetchJson(address: PlatformAddress, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      new URL(path, address.url),
      { ca: address.caPem, rejectUnauthorized: !address.insecure, headers: { accept: "application/json" } },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_JWKS_BYTES) request.destroy(new Error("JWKS document too large"));
          else chunks.push(chunk);
        });
        response.on("end", () => {
          if (response.statusCode !== 200) return reject(new Error(`JWKS request answered ${response.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          } catch {
            reject(new Error("the JWKS is not JSON"));
          }
        });
      },
    );
    request.setTimeout(FETCH_TIMEOUT_MS, () => request.destroy(new Error("JWKS request timed out")));
    request.on("error", reject);
    request.end();
  });
}

export class PlatformKeys {
  readonly #dir: string;
  readonly #logger?: Logger;
  #issuers: string[] = [];
  #platform?: PlatformAddress;
  #verifier?: TokenVerifier;

  constructor(dir: string, logger?: Logger) {
    this.#dir = dir;
    this.#logger = logger;
  }

  get #jwksFile(): string {
    return join(this.#dir, "jwks.json");
  }

  /** Reads what an earlier run kept: with it, tokens verify before (and without) any connection. */
  async load(): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const issuers = join(this.#dir, "issuers.json");
    if (existsSync(issuers)) this.#issuers = JSON.parse(await readFile(issuers, "utf8")) as string[];
  }

  /** Whether tokens can be verified: an issuer is known and so are keys (kept, or fetchable). */
  ready(): boolean {
    return this.#issuers.length > 0 && (this.#platform !== undefined || existsSync(this.#jwksFile));
  }

  /** Verifies a token offline; throws TokenVerificationError (or "not ready") when it is not valid. */
  async verify(token: string): Promise<VerifiedToken> {
    if (!this.ready()) throw new Error("the platform's signing keys are not known yet");
    this.#verifier ??= await this.#create();
    return this.#verifier.verify(token);
  }

  /** Connected to a platform that signs with `issuer`: fetch its keys now and keep them. */
  async connected(platform: PlatformAddress, issuer: string | undefined): Promise<void> {
    this.#platform = platform;
    if (issuer && !this.#issuers.includes(issuer)) {
      this.#issuers = [issuer, ...this.#issuers].slice(0, MAX_ISSUERS);
      await writeFile(join(this.#dir, "issuers.json"), `${JSON.stringify(this.#issuers)}\n`, { mode: 0o600 });
    }
    const refreshed = this.#verifier ? this.#verifier.refresh() : this.#fetch();
    await refreshed.catch((error) =>
      this.#logger?.warn({ err: String(error) }, "fetching the platform's signing keys failed"),
    );
  }

  async #create(): Promise<TokenVerifier> {
    const { createTokenVerifier } = await import("../identity/token-verifier.ts");
    return createTokenVerifier({
      issuers: () => this.#issuers,
      fetchJwks: () => this.#fetch(),
      onError: (error) => this.#logger?.warn({ err: String(error) }, "refreshing the platform's signing keys failed"),
    });
  }

  /** From the platform when it answers (kept on disk), else the copy on disk. */
  async #fetch(): Promise<unknown> {
    if (this.#platform) {
      try {
        const document = await fetchJson(this.#platform, "/.well-known/jwks.json");
        await writeFile(this.#jwksFile, `${JSON.stringify(document)}\n`, { mode: 0o600 });
        return document;
      } catch (error) {
        if (!existsSync(this.#jwksFile)) throw error;
      }
    }
    return JSON.parse(await readFile(this.#jwksFile, "utf8"));
  }
}
