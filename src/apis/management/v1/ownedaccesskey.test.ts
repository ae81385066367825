import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "../../../registry/testing.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { type AccessKeyCaller, createOwnedAccessKeyDefinition, type OwnedAccessKey } from "./ownedaccesskey.ts";
import { presentAccessKey } from "./ownedaccesskey-secrets.ts";

const digest = (key: string) => createHash("sha256").update(key).digest("hex");
let generated = 0;
const material = { generate: () => `generated-key-${++generated}-${"x".repeat(40)}`, digest };

/** Callers by user name: "admin" manages all; anyone else only its own keys. Test contexts are the platform. */
const caller: AccessKeyCaller = {
  owner: (context) => (context.user.name === "tester" ? undefined : { user: context.user.name }),
  managesAll: (context) => context.user.name === "tester" || context.user.name === "admin",
};

function definition(maxTTL = { value: 0 }, loginTTL = { value: 0 }): ResourceDefinition {
  const digests = new Set<string>();
  return createOwnedAccessKeyDefinition({
    owners: {
      user: async (name) =>
        name === "ghost" ? undefined : { uid: `uid-${name}`, tokenGeneration: 3, sessionGeneration: 1 },
      team: async (name) => ({ uid: `uid-team-${name}` }),
      digestInUse: async (d) => {
        // The fake index learns digests as keys are created.
        const used = digests.has(d);
        digests.add(d);
        return used;
      },
    },
    caller,
    material,
    limits: () => ({ accessKeyMaxTTLSeconds: maxTTL.value, loginAccessKeyTTLSeconds: loginTTL.value }),
  });
}

// The generic rules; reads never show the key here (the create response showing it once is tested below).
const conformance = definition();
describeResourceConformance({
  definition: {
    ...conformance,
    strategy: { ...conformance.strategy, presentForRead: (key) => presentAccessKey(key as OwnedAccessKey) },
  },
  sample: (name) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name },
    spec: { displayName: "Sample", user: "alice", ttl: 3600, type: "User" },
  }),
  changeSpec: (object) => {
    (object.spec as { displayName: string }).displayName = "Changed";
  },
});

describe("OwnedAccessKey", () => {
  let env: TestRegistry;
  let store: GenericStore;
  const maxTTL = { value: 0 };
  const loginTTL = { value: 0 };
  const as = (name: string): RequestContext => testContext({ user: { name, groups: [] } });
  const key = (name: string, spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    apiVersion: "management.platform.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name, ...extra },
    spec: { displayName: name, ...spec },
  });
  const create = (context: RequestContext, name: string, spec: Record<string, unknown> = {}, extra = {}) =>
    store.create(context, undefined, key(name, spec, extra), {}) as Promise<OwnedAccessKey>;
  const stored = async (name: string) => JSON.parse((await env.registry.storage.get(store.key({ name })))!.value);

  before(async () => {
    const def = definition(maxTTL, loginTTL);
    env = await openTestRegistry([def]);
    store = env.store(def);
  });
  after(() => env.close());

  it("create() generates a 256-bit key, shows it once and stores only its digest", async () => {
    const created = await create(as("bob"), "gen");
    const plain = created.spec?.key ?? "";
    assert.match(plain, /^generated-key-/);
    assert.equal(created.spec?.user, "bob", "spec.user defaults to the caller");
    assert.equal(created.spec?.type, "User");
    assert.equal((await stored("gen")).spec.key, `sha256:${digest(plain)}`);
    assert.equal(JSON.stringify(await store.get(as("bob"), { name: "gen" })).includes(plain), false);
    assert.equal(Object.hasOwn((await store.get(as("bob"), { name: "gen" })).spec as object, "key"), false);
    const list = await store.list(as("bob"), {});
    assert.equal(JSON.stringify(list).includes(digest(plain)), false);
  });

  it("create() requires a display name (422 naming spec.displayName); an update cannot empty one", async () => {
    for (const displayName of [undefined, "", "   "]) {
      const error = await statusErrorOf(create(as("bob"), "unnamed", { displayName }));
      assert.equal(error.code, 422, JSON.stringify(displayName));
      assert.match(error.message, /spec\.displayName: Required value/);
    }
    await assert.rejects(store.get(as("bob"), { name: "unnamed" }), /not found/, "nothing stored");
    await create(as("bob"), "named", { displayName: "CI deploys" });
    const emptied = await statusErrorOf(
      store.patch(as("bob"), { name: "named" }, "merge", { spec: { displayName: "" } }, {}),
    );
    assert.equal(emptied.code, 422);
    assert.match(emptied.message, /spec\.displayName: Required value/);
  });

  it("reads show status.expirationTimestamp from the ttl, the maximum key age and the Login key lifetime", async () => {
    const expires = async (name: string) =>
      ((await store.get(as("admin"), { name })) as OwnedAccessKey).status?.expirationTimestamp;
    const created = await create(as("bob"), "week", { ttl: 7 * 86_400 });
    const createdMs = Date.parse(created.metadata.creationTimestamp ?? "");
    const at = (seconds: number) => new Date(createdMs + seconds * 1000).toISOString().replace(".000Z", "Z");
    assert.equal(await expires("week"), at(7 * 86_400));
    await create(as("admin"), "login", { user: "bob", type: "Login" });
    assert.equal(await expires("login"), undefined, "no limit: no expiry");
    loginTTL.value = 20 * 86_400;
    maxTTL.value = 3 * 86_400;
    try {
      assert.equal(await expires("login"), at(3 * 86_400), "the shorter limit wins");
      maxTTL.value = 0;
      assert.equal(await expires("login"), at(20 * 86_400), "Login keys end with loginAccessKeyTTLSeconds");
      assert.equal(await expires("week"), at(7 * 86_400), "other keys do not");
      const listed = (await store.list(as("admin"), {})).items.find((k) => k.metadata.name === "login");
      assert.equal((listed as OwnedAccessKey).status?.expirationTimestamp, at(20 * 86_400), "lists too");
    } finally {
      loginTTL.value = 0;
      maxTTL.value = 0;
    }
    const forged = { status: { expirationTimestamp: "2000-01-01T00:00:00Z" } };
    await store.patch(as("admin"), { name: "week", subresource: "status" }, "merge", forged, {});
    assert.equal(JSON.stringify(await stored("week")).includes("expirationTimestamp"), false, "never stored");
  });

  it("create() takes a supplied key of at least 32 characters and never echoes a bad one", async () => {
    const supplied = "s".repeat(31);
    const error = await statusErrorOf(create(as("bob"), "short", { key: supplied }));
    assert.equal(error.code, 422);
    assert.equal(error.message.includes(supplied), false);
    assert.match(error.message, /spec\.key: Invalid value: "<hidden>"/);
    const spaced = await statusErrorOf(create(as("bob"), "spaced", { key: `${"a".repeat(20)} ${"b".repeat(20)}` }));
    assert.equal(spaced.code, 422);
    const good = "my-own-key-which-is-long-enough-0123456789";
    const created = await create(as("bob"), "supplied", { key: good });
    assert.equal(created.spec?.key, good);
    assert.equal((await stored("supplied")).spec.key, `sha256:${digest(good)}`);
    const twice = await statusErrorOf(create(as("bob"), "supplied-again", { key: good }));
    assert.equal(twice.code, 422);
    assert.equal(twice.message.includes(good), false);
  });

  it("create() pins the owner's uid and token generation and references the user for garbage collection", async () => {
    const created = await create(
      as("bob"),
      "pinned",
      {},
      { annotations: { "management.platform.sh/user-uid": "forged" } },
    );
    assert.equal(created.metadata.annotations?.["management.platform.sh/user-uid"], "uid-bob");
    assert.equal(created.metadata.annotations?.["management.platform.sh/token-generation"], "3");
    assert.deepEqual(created.metadata.ownerReferences, [
      { apiVersion: "management.platform.sh/v1", kind: "User", name: "bob", uid: "uid-bob" },
    ]);
    const ghost = await statusErrorOf(create(as("admin"), "ghost", { user: "ghost" }));
    assert.equal(ghost.code, 422);
    assert.match(ghost.message, /spec.user: Not found: "ghost"/);
  });

  it("create() refuses keys for others and platform-managed fields from non-admins", async () => {
    const other = await statusErrorOf(create(as("bob"), "for-carol", { user: "carol" }));
    assert.equal(other.code, 403);
    assert.match(other.message, /cannot create access keys for another user/);
    assert.equal((await statusErrorOf(create(as("bob"), "team", { team: "devs" }))).code, 403);
    assert.equal((await statusErrorOf(create(as("bob"), "subject", { subject: "x" }))).code, 403);
    for (const spec of [
      { groups: ["admins"] },
      { type: "Other" },
      { identity: { username: "root" } },
      { parent: "x" },
    ]) {
      const error = await statusErrorOf(create(as("bob"), "managed", spec));
      assert.equal(error.code, 403, JSON.stringify(spec));
      assert.match(error.message, /only admins manage them/);
    }
    const byAdmin = await create(as("admin"), "for-carol-by-admin", { user: "carol", groups: ["ops"] });
    assert.equal(byAdmin.spec?.user, "carol");
    assert.equal((await statusErrorOf(create(as("admin"), "two-owners", { user: "a", team: "b" }))).code, 422);
  });

  it("create() reduces a ttl above the global maximum and warns", async () => {
    maxTTL.value = 3600;
    try {
      const context = as("bob");
      const created = await create(context, "long", { ttl: 86400 });
      assert.equal(created.spec?.ttl, 3600);
      assert.match(context.warnings.join(), /reduced to the platform's maximum access key lifetime of 3600 seconds/);
      assert.equal((await create(as("bob"), "short-ttl", { ttl: 60 })).spec?.ttl, 60);
    } finally {
      maxTTL.value = 0;
    }
  });

  it("update() keeps the key, refuses a different one and keeps owner fields immutable", async () => {
    await create(as("bob"), "upd");
    const current = await store.get(as("bob"), { name: "upd" });
    const renamed = { ...current, spec: { ...(current.spec as object), displayName: "renamed" } };
    const updated = (await store.update(as("bob"), { name: "upd" }, renamed, {})) as OwnedAccessKey;
    assert.equal(updated.spec?.displayName, "renamed");
    assert.match((await stored("upd")).spec.key, /^sha256:/);
    const latest = await store.get(as("bob"), { name: "upd" });
    const rekey = {
      ...latest,
      spec: { ...(latest.spec as object), key: "another-key-that-is-long-enough-0123456789" },
    };
    assert.match(
      (await statusErrorOf(store.update(as("bob"), { name: "upd" }, rekey, {}))).message,
      /spec.key: Forbidden/,
    );
    for (const patch of [{ user: "carol" }, { type: "Login" }, { team: "devs" }]) {
      const error = await statusErrorOf(store.patch(as("admin"), { name: "upd" }, "merge", { spec: patch }, {}));
      assert.equal(error.code, 422, JSON.stringify(patch));
      assert.match(error.message, /field is immutable/);
    }
  });

  it("update() and delete() answer 404 for another user's key, checked against the stored object", async () => {
    await create(as("carol"), "carols");
    const patch = statusErrorOf(store.patch(as("bob"), { name: "carols" }, "merge", { spec: { disabled: true } }, {}));
    assert.equal((await patch).code, 404);
    assert.equal((await statusErrorOf(store.delete(as("bob"), { name: "carols" }, {}))).code, 404);
    assert.equal((await stored("carols")).spec.disabled, undefined);
  });

  it("patch() cannot copy the digest anywhere readable", async () => {
    await create(as("bob"), "copy");
    for (const [op, path] of [
      ["copy", "/spec/displayName"],
      ["copy", "/metadata/annotations/x"],
      ["move", "/spec/description"],
    ]) {
      const error = await statusErrorOf(
        store.patch(as("bob"), { name: "copy" }, "json", [{ op, from: "/spec/key", path }], {}),
      );
      assert.equal(error.code, 422, `${op} ${path}`);
      assert.match(error.message, /the access key may appear only in spec.key/);
    }
    assert.equal((await stored("copy")).spec.displayName, "copy", "unchanged");
  });

  it("create() drops the key from kubectl's last-applied annotation and refuses it anywhere else", async () => {
    const plain = "applied-key-that-is-long-enough-0123456789abc";
    const manifest = key("applied", { key: plain, displayName: "ci" });
    const annotations = { "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify(manifest) };
    const created = await create(as("bob"), "applied", { key: plain, displayName: "ci" }, { annotations });
    assert.equal(JSON.stringify(created.metadata).includes(plain), false);
    assert.equal(
      (await stored("applied")).metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"].includes(
        plain,
      ),
      false,
    );
    const leaked = await statusErrorOf(create(as("bob"), "leaky", { key: `${plain}z`, description: `${plain}z` }));
    assert.equal(leaked.code, 422);
    assert.equal(leaked.message.includes(plain), false);
  });

  it("reads never return OIDC tokens or connector data, and updates keep them", async () => {
    await create(as("admin"), "sso", {
      user: "bob",
      identity: { username: "bob", connectorData: "secret-connector-data" },
      oidcLogin: {
        idToken: "secret-id-token",
        refreshToken: "secret-refresh-token",
        lastRefresh: "2026-01-01T00:00:00Z",
      },
    });
    const read = await store.get(as("admin"), { name: "sso" });
    assert.equal(JSON.stringify(read).includes("secret-"), false);
    await store.update(
      as("admin"),
      { name: "sso" },
      { ...read, spec: { ...(read.spec as object), displayName: "x" } },
      {},
    );
    const raw = await stored("sso");
    assert.equal(raw.spec.identity.connectorData, "secret-connector-data");
    assert.equal(raw.spec.oidcLogin.refreshToken, "secret-refresh-token");
  });
});
