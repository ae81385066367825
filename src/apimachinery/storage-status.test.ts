import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StorageError, type StorageErrorCode } from "../storage/types.ts";
import { isStatusError } from "./errors.ts";
import { storageStatus } from "./storage-status.ts";

const users = { group: "management.platform.sh", resource: "users" };
const CODES: StorageErrorCode[] = [
  "KeyExists",
  "NotFound",
  "Conflict",
  "Compacted",
  "Closed",
  "NoSpace",
  "Corrupt",
  "Unavailable",
];
const codeOf = (value: unknown) => (isStatusError(value) ? value.code : 500);

describe("storageStatus()", () => {
  it("storageStatus() answers each storage code with the object's Status", () => {
    const answered = Object.fromEntries(
      CODES.map((code) => [
        code,
        codeOf(storageStatus(new StorageError(code, "x"), { resource: users, name: "alice" })),
      ]),
    );
    assert.deepEqual(answered, {
      KeyExists: 409,
      NotFound: 404,
      Conflict: 409,
      Compacted: 410,
      Closed: 503,
      NoSpace: 507,
      Corrupt: 500,
      Unavailable: 503,
    });
    const conflict = storageStatus(new StorageError("Conflict", "x"), { resource: users, name: "alice" });
    assert.ok(isStatusError(conflict));
    assert.equal(conflict.reason, "Conflict");
    assert.match(conflict.message, /users\.management\.platform\.sh "alice"/);
  });

  it("storageStatus() without an object: conflicts and absences are server faults, capacity and shutdown are not", () => {
    const answered = Object.fromEntries(
      CODES.map((code) => [code, codeOf(storageStatus(new StorageError(code, "x")))]),
    );
    assert.deepEqual(answered, {
      KeyExists: 500,
      NotFound: 500,
      Conflict: 500,
      Compacted: 500,
      Closed: 503,
      NoSpace: 507,
      Corrupt: 500,
      Unavailable: 503,
    });
  });

  it("storageStatus() keeps a server fault's cause out of the answer and passes other values through", () => {
    const corrupt = new StorageError("Corrupt", "bad record in /var/lib/platform/store.db key /users/alice");
    assert.equal(storageStatus(corrupt), corrupt, "returned as it is: the HTTP mapping logs it and answers 500");
    const other = new Error("boom");
    assert.equal(storageStatus(other, { resource: users, name: "a" }), other);
  });

  it("storageStatus() says which list read expired: the continue token or the resource version asked for", () => {
    const compacted = new StorageError("Compacted", "x", { compactedRevision: 40 });
    const byToken = storageStatus(compacted, { resource: users, name: "", list: { revision: 12, continued: true } });
    const byVersion = storageStatus(compacted, { resource: users, name: "", list: { revision: 12, continued: false } });
    assert.ok(isStatusError(byToken) && isStatusError(byVersion));
    assert.match(byToken.message, /continue parameter is too old/);
    assert.equal(byVersion.message, "too old resource version: 12 (40)");
  });
});
