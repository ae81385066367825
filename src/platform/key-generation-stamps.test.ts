import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { restampKeyGenerations } from "./key-generation-stamps.ts";

const G = "management.platform.sh";
const user = (name: string, uid: string, tokenGeneration: number) => ({
  apiVersion: `${G}/v1`,
  kind: "User",
  metadata: { name, uid },
  spec: { tokenGeneration },
});
const key = (name: string, type: string, owner: string, uid: string, generation: string, session?: string) => ({
  apiVersion: `${G}/v1`,
  kind: "OwnedAccessKey",
  metadata: {
    name,
    annotations: {
      "management.platform.sh/user-uid": uid,
      "management.platform.sh/token-generation": generation,
      ...(session === undefined ? {} : { "management.platform.sh/session-generation": session }),
    },
  },
  spec: { type, user: owner, key: "sha256:00" },
});

describe("restampKeyGenerations()", () => {
  it("restampKeyGenerations() keeps API keys a password change left working under the old rule, and nothing else", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const put = (path: string, value: unknown) => storage.create(`/${G}/${path}`, JSON.stringify(value));
    await put("users//carol", user("carol", "uid-c", 2));
    await put("ownedaccesskeys//ci", key("ci", "User", "carol", "uid-c", "0"));
    await put("ownedaccesskeys//login", key("login", "Login", "carol", "uid-c", "0"));
    await put("ownedaccesskeys//other-carol", key("other-carol", "User", "carol", "uid-old", "0"));
    await put("ownedaccesskeys//new", key("new", "User", "carol", "uid-c", "1", "0"));
    const read = async (name: string) =>
      JSON.parse((await storage.get(`/${G}/ownedaccesskeys//${name}`))?.value ?? "{}").metadata.annotations;

    assert.equal(await restampKeyGenerations(storage), 3);
    assert.equal((await read("ci"))["management.platform.sh/token-generation"], "2", "the CI key keeps working");
    assert.equal((await read("ci"))["management.platform.sh/session-generation"], "0");
    assert.equal((await read("login"))["management.platform.sh/token-generation"], "0", "a revoked login stays so");
    assert.equal((await read("other-carol"))["management.platform.sh/token-generation"], "0", "another carol's");
    assert.equal((await read("new"))["management.platform.sh/token-generation"], "1", "keys made since: untouched");
    assert.equal(await restampKeyGenerations(storage), 0, "the next start finds nothing to do");
    await storage.close();
  });
});
