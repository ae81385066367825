import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { openSqliteStore } from "../sqlite/sqlite-store.ts";
import { resealSecretValues } from "./reseal.ts";
import { sealingKeyId, ValueCipher } from "./value-cipher.ts";

describe("resealSecretValues()", () => {
  it("seals plain values and re-seals other keys' values with the primary key, leaving other keys alone", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const old = new ValueCipher([oldKey]);
    await store.create("/secret/a", "plain-a");
    await store.create("/secret/b", old.seal("/secret/b", "old-b"));
    await store.create("/public/c", "plain-c");
    const cipher = new ValueCipher([newKey, oldKey]);
    await store.create("/secret/d", cipher.seal("/secret/d", "new-d"));
    const revision = (await store.get("/secret/d"))!.revision;

    const result = await resealSecretValues(store, { secretPrefixes: ["/secret/"], cipher });
    assert.deepEqual(result, { plain: 1, rekeyed: 1 });
    for (const [key, value] of [
      ["/secret/a", "plain-a"],
      ["/secret/b", "old-b"],
      ["/secret/d", "new-d"],
    ]) {
      const record = (await store.get(key))!;
      assert.equal(sealingKeyId(record.value), cipher.primaryKeyId, key);
      assert.equal(cipher.open(key, record.value), value);
    }
    assert.equal((await store.get("/secret/d"))!.revision, revision, "an up-to-date value is not rewritten");
    assert.equal((await store.get("/public/c"))!.value, "plain-c");
    assert.deepEqual(await resealSecretValues(store, { secretPrefixes: ["/secret/"], cipher }), {
      plain: 0,
      rekeyed: 0,
    });
    await store.close();
  });

  it("pages through many values", async () => {
    const store = await openSqliteStore({ path: ":memory:" });
    await Promise.all(
      Array.from({ length: 1203 }, (_, i) => store.create(`/secret/${String(i).padStart(5, "0")}`, `v${i}`)),
    );
    const cipher = new ValueCipher([randomBytes(32)]);
    assert.deepEqual(await resealSecretValues(store, { secretPrefixes: ["/secret/"], cipher }), {
      plain: 1203,
      rekeyed: 0,
    });
    await store.close();
  });
});
