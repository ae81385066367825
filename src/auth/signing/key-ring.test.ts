import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openSqliteStore } from "../../storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { CLOCK_SKEW_GRACE_MS, SIGNING_KEYS_PREFIX, SigningKeyRing } from "./key-ring.ts";

const HOUR = 3600;
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi"];

describe("SigningKeyRing", () => {
  let storage: KeyValueStore;
  const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
  const open = (algorithm?: "ES256" | "RS256") =>
    SigningKeyRing.open({ storage, maxTokenTTLSeconds: HOUR, algorithm, now: () => clock.now });

  before(async () => {
    storage = await openSqliteStore({ path: ":memory:" });
  });
  after(async () => {
    await storage.close();
  });

  it("open() creates one ES256 key on first start, stored only under /internal/signingkeys/ with its private JWK", async () => {
    const ring = await open();
    const key = ring.current();
    assert.equal(key.alg, "ES256");
    const { records } = await storage.list({ prefix: "/" });
    assert.deepEqual(
      records.map((r) => r.key),
      [`${SIGNING_KEYS_PREFIX}${key.kid}`],
    );
    const stored = JSON.parse(records[0].value);
    assert.equal(stored.privateJwk.kty, "EC");
    assert.equal(typeof stored.privateJwk.d, "string");
  });

  it("open() loads the stored key again instead of making a new one", async () => {
    const first = (await open()).current().kid;
    assert.equal((await open()).current().kid, first);
    assert.equal(await storage.count(SIGNING_KEYS_PREFIX), 1);
  });

  it("jwks() publishes public members only, with kid, alg and use", async () => {
    const ring = await open();
    const { keys } = ring.jwks();
    assert.equal(keys.length, 1);
    for (const member of PRIVATE_MEMBERS) assert.equal(member in keys[0], false, `${member} is published`);
    assert.deepEqual(
      { kid: keys[0].kid, alg: keys[0].alg, use: keys[0].use, crv: keys[0].crv },
      { kid: ring.current().kid, alg: "ES256", use: "sig", crv: "P-256" },
    );
  });

  it("rotate() adds a new current key and keeps the previous one published until its tokens have expired", async () => {
    const ring = await open();
    const old = ring.current().kid;
    const result = await ring.rotate("RS256");
    assert.equal(result.algorithm, "RS256");
    assert.equal(ring.current().kid, result.keyID);
    assert.notEqual(result.keyID, old);
    assert.deepEqual(result.publishedKeyIDs, [result.keyID, old]);
    const rsa = ring.jwks().keys.find((k) => k.kid === result.keyID)!;
    assert.equal(rsa.kty, "RSA");
    for (const member of PRIVATE_MEMBERS) assert.equal(member in rsa, false, `${member} is published`);
    assert.ok(ring.verificationKey(old), "the old key still verifies");

    // Still published one second before the last token it signed can expire (plus the skew grace)...
    clock.now += HOUR * 1000 + CLOCK_SKEW_GRACE_MS - 1000;
    assert.deepEqual(
      ring.jwks().keys.map((k) => k.kid),
      [result.keyID, old],
    );
    // ...and gone after, from the JWKS and from storage.
    clock.now += 2000;
    assert.deepEqual(
      ring.jwks().keys.map((k) => k.kid),
      [result.keyID],
    );
    assert.equal(ring.verificationKey(old), undefined);
    await ring.rotate("ES256"); // serialized after the pruning the read above scheduled
    assert.equal(await storage.get(`${SIGNING_KEYS_PREFIX}${old}`), undefined);
  });

  it("open() after a rotation stopped between its writes makes the newest key current and retires the other", async () => {
    const ring = await open();
    const older = ring.current();
    // A second live key, as if the process died after creating it but before retiring the first.
    const second = await SigningKeyRing.open({
      storage: await openSqliteStore({ path: ":memory:" }),
      maxTokenTTLSeconds: HOUR,
      now: () => clock.now + 1000,
    });
    const stored = { ...second.current().stored };
    await storage.create(`${SIGNING_KEYS_PREFIX}${stored.kid}`, JSON.stringify(stored));
    const reopened = await open();
    assert.equal(reopened.current().kid, stored.kid);
    assert.ok(reopened.verificationKey(older.kid), "the older key stays published");
    const record = JSON.parse((await storage.get(`${SIGNING_KEYS_PREFIX}${older.kid}`))!.value);
    assert.equal(record.retiredAt, stored.createdAt);
  });

  it("open() makes the first key RS256 when asked", async () => {
    const fresh = await openSqliteStore({ path: ":memory:" });
    try {
      const ring = await SigningKeyRing.open({ storage: fresh, maxTokenTTLSeconds: HOUR, algorithm: "RS256" });
      assert.equal(ring.current().alg, "RS256");
      assert.equal(ring.jwks().keys[0].kty, "RSA");
    } finally {
      await fresh.close();
    }
  });
});
