import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, beforeEach, describe, it } from "node:test";
import { openTokenFixture, TEST_ISSUER, type TokenFixture } from "./token-testing.ts";
import { createTokenVerifier, TokenVerificationError, type TokenVerifierOptions } from "./token-verifier.ts";

/** A scope the issuer signs without asking about rights (clusters and spaces need the right to use them). */
const SCOPE = { virtualClusters: [{ project: "p", virtualCluster: "vc" }] };

describe("createTokenVerifier()", () => {
  let f: TokenFixture;
  let key: string;
  let fetches = 0;
  let platformDown = false;
  const fetchJwks = async () => {
    fetches++;
    if (platformDown) throw new Error("connection refused");
    return structuredClone(f.ring.jwks());
  };
  const verifier = (options: Partial<TokenVerifierOptions> = {}) =>
    createTokenVerifier({ fetchJwks, issuer: TEST_ISSUER, now: () => f.clock.now, ...options });
  const issue = async (ttlSeconds = 600) =>
    (await f.issuer.issue({ context: await f.contextOf(key), ttlSeconds, scope: SCOPE })).token;
  const reason = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof TokenVerificationError, String(error));
      return error.reason;
    }
    throw new Error("the token was accepted");
  };

  before(async () => {
    f = await openTokenFixture();
    await f.createUser("bob");
    key = await f.createKey("bob-key", { user: "bob" });
  });
  beforeEach(() => {
    fetches = 0;
    platformDown = false;
    f.clock.now = Date.now();
  });
  after(async () => {
    await f.close();
  });

  it("verify() returns the platform claims of a valid token", async () => {
    const token = await issue();
    const verified = await verifier().verify(token);
    assert.deepEqual(
      { name: verified.name, uid: verified.uid, kind: verified.kind, gen: verified.gen, scope: verified.scope },
      { name: "bob", uid: f.index.user("bob")!.uid, kind: "User", gen: 0, scope: SCOPE },
    );
    assert.equal(verified.exp - verified.iat, 600);
  });

  it("verify() keeps working from the cached key set while the platform is unreachable", async () => {
    const v = verifier({ refreshIntervalMs: 1000 });
    await v.verify(await issue());
    platformDown = true;
    f.clock.now += 5000; // stale: a background refresh fails, the cached keys still verify
    await v.verify(await issue());
    assert.equal(fetches, 2);
  });

  it("verify() without any key set yet says the keys are unavailable", async () => {
    platformDown = true;
    assert.equal(await reason(verifier().verify(await issue())), "jwks-unavailable");
  });

  it("verify() fetches the key set again for an unknown kid, at most once per interval", async () => {
    const v = verifier({ minRefetchIntervalMs: 10_000 });
    await v.verify(await issue());
    await f.ring.rotate();
    f.clock.now += 10_000;
    await v.verify(await issue()); // the new kid: one refetch
    assert.equal(fetches, 2);
    await f.ring.rotate();
    const next = await issue();
    f.clock.now += 1000;
    assert.equal(await reason(v.verify(next)), "unknown-key"); // too soon after the last fetch
    assert.equal(await reason(v.verify(next)), "unknown-key");
    assert.equal(fetches, 2);
    f.clock.now += 10_000;
    await v.verify(next);
    assert.equal(fetches, 3);
  });

  it("verify() rejects expired, foreign-issuer, wrong-audience, tampered and malformed tokens", async () => {
    const token = await issue(60);
    const v = verifier();
    await v.verify(token);
    f.clock.now += 61_000;
    assert.equal(await reason(v.verify(token)), "expired");
    f.clock.now -= 61_000;
    assert.equal(await reason(verifier({ issuer: "https://elsewhere" }).verify(token)), "unknown-issuer");
    assert.equal(await reason(verifier({ audience: "other" }).verify(token)), "invalid");
    const [h, p, s] = token.split(".");
    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, gen: 5 })).toString("base64url")}.${s}`;
    assert.equal(await reason(v.verify(tampered)), "invalid");
    assert.equal(await reason(v.verify("not-a-token")), "malformed");
  });

  it("verify() accepts every issuer `issuers` lists, read at each call: the key proves the token", async () => {
    const token = await issue();
    const accepted = ["https://old.example"];
    const v = verifier({ issuer: undefined, issuers: () => accepted });
    assert.equal(await reason(v.verify(token)), "unknown-issuer");
    accepted.push(TEST_ISSUER);
    assert.equal((await v.verify(token)).name, "bob");
    const [h, p] = token.split(".");
    const forged = `${h}.${p}.${Buffer.alloc(64).toString("base64url")}`;
    assert.equal(await reason(v.verify(forged)), "invalid", "an issuer is never checked before the signature");
  });

  it("verify() errors never contain the token", async () => {
    const token = await issue(60);
    f.clock.now += 61_000;
    const error = await verifier()
      .verify(token)
      .catch((e: Error) => e);
    assert.ok(error instanceof Error);
    assert.equal(error.message.includes(token.split(".")[1]), false);
  });

  it("the verifier imports nothing of the platform at run time (it runs in the virtual cluster process)", async () => {
    for (const file of ["token-verifier.ts", "token-claims.ts"]) {
      const source = await readFile(new URL(file, import.meta.url), "utf8");
      const runtime = [...source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]);
      for (const specifier of runtime) {
        assert.ok(
          specifier.startsWith("node:") || specifier === "jose" || specifier === "./token-claims.ts",
          `${file} imports ${specifier}`,
        );
      }
    }
  });
});
