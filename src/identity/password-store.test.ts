import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hashPassword, verifyPassword } from "../auth/password-hash.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { PASSWORDS_PREFIX, PasswordStore } from "./password-store.ts";

const cheap = { N: 1024, r: 8, p: 1 };

describe("password hashing", () => {
  it("hashPassword() salts each hash and verifyPassword() accepts only the password", async () => {
    const a = await hashPassword("correct horse", cheap);
    const b = await hashPassword("correct horse", cheap);
    assert.notEqual(a.hash, b.hash);
    assert.equal(a.algorithm, "scrypt");
    assert.ok(await verifyPassword("correct horse", a));
    assert.equal(await verifyPassword("correct horsf", a), false);
    assert.equal(await verifyPassword("", a), false);
  });
});

describe("PasswordStore", () => {
  it("set() stores only a hash under /internal/, and verify() checks it for the same user uid", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const passwords = new PasswordStore(storage, cheap);
    await passwords.set({ name: "bob", uid: "u1" }, "bob-password");
    const raw = (await storage.get(`${PASSWORDS_PREFIX}bob`))!.value;
    assert.equal(raw.includes("bob-password"), false);
    assert.ok(await passwords.verify({ name: "bob", uid: "u1" }, "bob-password"));
    assert.equal(await passwords.verify({ name: "bob", uid: "u1" }, "wrong"), false);
    // A user re-created under the same name does not inherit the password.
    assert.equal(await passwords.verify({ name: "bob", uid: "u2" }, "bob-password"), false);
    assert.equal(await passwords.has({ name: "bob", uid: "u2" }), false);
    assert.equal(await passwords.verify(undefined, "bob-password"), false);
    await passwords.set({ name: "bob", uid: "u1" }, "new-password");
    assert.ok(await passwords.verify({ name: "bob", uid: "u1" }, "new-password"));
    await passwords.remove({ name: "bob", uid: "u2" });
    assert.ok(await passwords.has({ name: "bob", uid: "u1" }), "another uid's removal leaves it");
    await passwords.remove({ name: "bob", uid: "u1" });
    assert.equal(await storage.get(`${PASSWORDS_PREFIX}bob`), undefined);
    await storage.close();
  });
});
