import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { eventually } from "../../utils/testing-eventually.ts";
import { describeStoreConformance } from "../conformance.ts";
import { openSqliteStore } from "../sqlite/sqlite-store.ts";
import { StorageError, type WatchEvent } from "../types.ts";
import { encryptSecretValues } from "./encrypted-store.ts";
import { isEncryptedValue, ValueCipher } from "./value-cipher.ts";

const cipher = new ValueCipher([randomBytes(32)]);

// The decorator must not change any behaviour of the store it wraps, whether every key is secret or only some.
describeStoreConformance("EncryptedStore (every key secret)", async () =>
  encryptSecretValues(await openSqliteStore({ path: ":memory:" }), { secretPrefixes: ["/"], cipher: () => cipher }),
);
describeStoreConformance("EncryptedStore (keys under /b secret)", async () =>
  encryptSecretValues(await openSqliteStore({ path: ":memory:" }), { secretPrefixes: ["/b"], cipher: () => cipher }),
);

async function open() {
  const backend = await openSqliteStore({ path: ":memory:" });
  const store = encryptSecretValues(backend, { secretPrefixes: ["/internal/"], cipher: () => cipher });
  return { backend, store };
}

describe("encryptSecretValues()", () => {
  it("stores secret keys sealed and other keys as written", async () => {
    const { backend, store } = await open();
    await store.create("/internal/passwords/alice", '{"hash":"s3cret"}');
    await store.create("/management.platform.sh/users//alice", '{"name":"alice"}');
    const all = (await backend.list({ prefix: "/" })).records;
    const secret = all.find((r) => r.key === "/internal/passwords/alice")!;
    assert.ok(isEncryptedValue(secret.value));
    assert.ok(!secret.value.includes("s3cret"));
    assert.equal(all.find((r) => r.key.includes("users"))!.value, '{"name":"alice"}');
    assert.equal((await store.get("/internal/passwords/alice"))!.value, '{"hash":"s3cret"}');
    assert.equal((await store.list({ prefix: "/" })).records[0].value, '{"hash":"s3cret"}');
    await store.close();
  });

  it("opens watch events, previous versions and the current record of a failed compare-and-swap", async () => {
    const { store } = await open();
    const events: WatchEvent[] = [];
    const watcher = store.watch({
      prefix: "/internal/",
      afterRevision: 0,
      onEvents: (e) => void events.push(...e),
      onClose() {},
    });
    const created = await store.create("/internal/signingkeys/a", "v1");
    await store.update("/internal/signingkeys/a", "v2", created.revision);
    const conflict = await store.update("/internal/signingkeys/a", "v3", created.revision).catch((e: unknown) => e);
    assert.ok(conflict instanceof StorageError && conflict.storageCode === "Conflict");
    assert.equal(conflict.current?.value, "v2");
    const deleted = await store.delete("/internal/signingkeys/a");
    assert.equal(deleted.value, "v2");
    await eventually(() => events.length >= 3, "the three events");
    assert.deepEqual(
      events.map((e) => [e.type, e.record.value, e.previous?.value]),
      [
        ["create", "v1", undefined],
        ["update", "v2", "v1"],
        ["delete", "v2", "v2"],
      ],
    );
    watcher.close();
    await store.close();
  });

  it("refuses to hand out a secret value that does not open: plain text, or sealed by an unknown key", async () => {
    const { backend, store } = await open();
    await backend.create("/internal/passwords/bob", '{"hash":"planted"}');
    await assert.rejects(store.get("/internal/passwords/bob"), /is not encrypted/);
    const stranger = new ValueCipher([randomBytes(32)]);
    await backend.create("/internal/passwords/carol", stranger.seal("/internal/passwords/carol", "x"));
    await assert.rejects(store.list({ prefix: "/internal/passwords/c" }), /not among the platform's encryption keys/);
    await store.close();
  });

  it("ends a watch whose event does not open instead of delivering it", async () => {
    const { backend, store } = await open();
    const delivered: WatchEvent[] = [];
    let closed = false;
    store.watch({
      prefix: "/internal/",
      afterRevision: 0,
      onEvents: (e) => void delivered.push(...e),
      onClose: () => {
        closed = true;
      },
    });
    await backend.create("/internal/passwords/dave", "plain");
    await eventually(() => closed, "the watch to end");
    assert.equal(delivered.length, 0);
    assert.ok(closed);
    await store.close();
  });
});
