import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { statusErrorOf } from "../registry/testing.ts";
import type { ApiWatchEvent, RequestContext } from "../registry/types.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { keyCaller } from "./key-caller.ts";
import { OwnAccessKeysView } from "./owned-access-key-view.ts";
import { type AuthFixture, openAuthFixture } from "./testing.ts";

describe("OwnAccessKeysView", () => {
  let f: AuthFixture;
  let view: OwnAccessKeysView;
  let bob: RequestContext;
  let vera: RequestContext;
  let root: RequestContext;

  before(async () => {
    f = await openAuthFixture();
    view = new OwnAccessKeysView(f.keys, keyCaller);
    await f.createUser("bob");
    await f.createUser("carol");
    await f.createUser("vera", { clusterRoles: [{ name: "viewer" }] });
    await f.createUser("root", { clusterRoles: [{ name: "admin" }] });
    bob = await f.contextOf(await f.createKey("bob-1", { user: "bob" }));
    await f.createKey("carol-1", { user: "carol" });
    vera = await f.contextOf(await f.createKey("vera-1", { user: "vera" }));
    root = await f.contextOf(await f.createKey("root-1", { user: "root" }));
  });
  after(() => f.close());

  const names = (items: { metadata: { name?: string } }[]) => items.map((i) => i.metadata.name).sort();

  it("list() shows a non-admin only its own keys, and admins and viewers all", async () => {
    assert.deepEqual(names((await view.list(bob, {})).items), ["bob-1"]);
    assert.deepEqual(names((await view.list(bob, { fieldSelector: "spec.user=carol" })).items), []);
    assert.deepEqual(names((await view.list(vera, {})).items), ["bob-1", "carol-1", "root-1", "vera-1"]);
    assert.equal((await view.list(root, {})).items.length, 4);
  });

  it("get(), update(), patch() and delete() of another user's key answer the same 404 as a missing key", async () => {
    const missing = await statusErrorOf(view.get(bob, { name: "nope" }));
    for (const attempt of [
      view.get(bob, { name: "carol-1" }),
      view.update(bob, { name: "carol-1" }, { metadata: { name: "carol-1", resourceVersion: "1" } }, {}),
      view.patch(bob, { name: "carol-1" }, "merge", { bogus: true }, {}),
      view.delete(bob, { name: "carol-1" }, {}),
    ]) {
      const error = await statusErrorOf(attempt);
      assert.equal(error.code, 404);
      assert.equal(error.message, missing.message.replace("nope", "carol-1"));
    }
    assert.equal((await view.get(vera, { name: "carol-1" })).metadata.name, "carol-1");
    assert.equal((await statusErrorOf(view.delete(vera, { name: "carol-1" }, {}))).code, 404, "viewers do not manage");
  });

  it("watch() sends a non-admin only its own keys", async () => {
    const events: ApiWatchEvent[] = [];
    const handle = await view.watch(bob, {}, { send: (e) => events.push(e) > 0, end: () => {} });
    await f.createKey("carol-2", { user: "carol" });
    await f.createKey("bob-2", { user: "bob" });
    await eventually(() => events.length >= 2, "bob-2's event");
    await f.createKey("bob-3", { user: "bob" });
    await eventually(() => events.length >= 3, "bob-3's event");
    handle.close();
    assert.deepEqual(
      events.map((e) => `${e.type} ${(e.object as { metadata: { name: string } }).metadata.name}`),
      ["ADDED bob-1", "ADDED bob-2", "ADDED bob-3"],
    );
  });

  it("deleteCollection() removes only the caller's own keys", async () => {
    await view.deleteCollection(bob, {}, {});
    assert.deepEqual(names((await view.list(root, { fieldSelector: "spec.user=bob" })).items), []);
    // (carol-2 was created while bob watched: it never reached bob's watch.)
    assert.deepEqual(names((await view.list(root, { fieldSelector: "spec.user=carol" })).items), [
      "carol-1",
      "carol-2",
    ]);
  });
});
