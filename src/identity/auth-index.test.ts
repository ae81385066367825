import assert from "node:assert/strict";
import { test } from "node:test";
import { DIGEST_PREFIX } from "../apis/management/v1/ownedaccesskey-secrets.ts";
import type { StoredRecord } from "../storage/types.ts";
import { AuthIndex } from "./auth-index.ts";

const USERS = "/management.platform.sh/users//";

const userRecord = (name: string, spec: Record<string, unknown>, revision: number): StoredRecord => ({
  key: `${USERS}${name}`,
  value: JSON.stringify({ metadata: { name, uid: `uid-${name}` }, spec }),
  revision,
  createRevision: revision,
});

test("AuthIndex.decodeWith() reads every watched record through the given decoder, once per event", () => {
  const index = new AuthIndex();
  const decoded: StoredRecord[] = [];
  index.decodeWith((record) => {
    decoded.push(record);
    return JSON.parse(record.value);
  });
  const created = userRecord("ada", { username: "ada", clusterRoles: [{ name: "admin" }] }, 2);
  const updated = userRecord("ada", { username: "ada", disabled: true }, 3);
  index.apply({ type: "create", record: created });
  assert.deepEqual(index.user("ada")?.clusterRoles, ["admin"]);
  index.apply({ type: "update", record: updated, previous: created });
  assert.equal(index.user("ada")?.disabled, true);
  index.apply({ type: "delete", record: { ...updated, revision: 4 } });
  assert.equal(index.user("ada"), undefined);
  assert.deepEqual(
    decoded.map((record) => record.revision),
    [2, 3, 4],
  );
});

test("AuthIndex.apply() leaves the decoded object as it found it (the decode is shared with other watchers)", () => {
  const index = new AuthIndex();
  const object = JSON.parse(userRecord("bob", { groups: ["dev"], clusterRoles: [{ name: "admin" }] }, 2).value);
  const before = structuredClone(object);
  index.decodeWith(() => object);
  index.apply({ type: "create", record: userRecord("bob", {}, 2) });
  assert.deepEqual(index.user("bob")?.groups, ["dev"]);
  assert.deepEqual(object, before);
});

test("AuthIndex.apply() keeps its own copy of access rules and owner, not the shared object's", () => {
  const index = new AuthIndex();
  const record = userRecord("carol", {}, 2);
  const object = {
    metadata: { name: "carol", uid: "uid-carol" },
    spec: { owner: { user: "carol" }, access: [{ users: ["dave"], verbs: ["get"] }] },
  };
  index.decodeWith(() => object);
  index.apply({ type: "create", record });
  const entry = index.accessOf(record.key);
  assert.deepEqual(entry, { owner: object.spec.owner, access: object.spec.access });
  assert.notEqual(entry?.access, object.spec.access);
  assert.notEqual(entry?.owner, object.spec.owner);
});

test("AuthIndex.onCallerChange() tells of every change but the activity recorded on a key", () => {
  const index = new AuthIndex();
  let told = 0;
  const stop = index.onCallerChange(() => {
    told++;
  });
  const key = (spec: Record<string, unknown>, status: Record<string, unknown>, revision: number): StoredRecord => ({
    key: "/management.platform.sh/ownedaccesskeys//k1",
    value: JSON.stringify({
      metadata: { name: "k1", uid: "uid-k1" },
      spec: { key: `${DIGEST_PREFIX}abc`, user: "ada", ...spec },
      status,
    }),
    revision,
    createRevision: 2,
  });
  const created = key({}, {}, 2);
  index.apply({ type: "create", record: created });
  assert.equal(told, 1, "a new key");
  const used = key({}, { lastActivity: "2026-12-01T00:00:00Z" }, 3);
  index.apply({ type: "update", record: used, previous: created });
  const usedAgain = key({}, { lastActivity: "2026-12-01T00:05:00Z" }, 4);
  index.apply({ type: "update", record: usedAgain, previous: used });
  assert.equal(told, 1, "activity alone tells nothing");
  const scoped = key({ scope: { projects: [{ project: "a" }] } }, { lastActivity: "2026-12-01T00:05:00Z" }, 5);
  index.apply({ type: "update", record: scoped, previous: usedAgain });
  assert.equal(told, 2, "a new scope");
  index.apply({ type: "create", record: userRecord("ada", { username: "ada" }, 6) });
  assert.equal(told, 3, "a user");
  index.apply({ type: "delete", record: { ...scoped, revision: 7 } });
  assert.equal(told, 4, "a deleted key");
  stop();
  index.apply({ type: "create", record: userRecord("bob", { username: "bob" }, 8) });
  assert.equal(told, 4, "unsubscribed");
});
