// The KV version 2 client against the test server written from Vault's API document (test/support/).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startVaultTestServer, type VaultTestServer } from "../../test/support/vault-kv2-server.ts";
import { kvPath, type VaultError, VaultKvClient } from "./vault-kv.ts";

describe("VaultKvClient", () => {
  let vault: VaultTestServer;
  before(async () => {
    vault = await startVaultTestServer({ tls: true });
    vault.addToken("root-token");
    vault.addToken("team-token", { namespace: "team", paths: ["apps/"] });
    vault.addToken("reader", { readOnly: true });
  });
  after(() => vault.close());
  const client = (token = "root-token", extra: Partial<ConstructorParameters<typeof VaultKvClient>[0]> = {}) =>
    new VaultKvClient({ address: vault.address, token, ca: vault.caPem, ...extra });

  it("VaultKvClient writes versions, reads the newest and sends Vault's headers", async () => {
    const kv = client();
    assert.equal(await kv.read("a/b"), undefined);
    assert.equal(await kv.write("a/b", { user: "u", pass: "p1" }, 0), 1);
    assert.equal(await kv.write("a/b", { user: "u", pass: "p2" }, 1), 2);
    assert.deepEqual(await kv.read("a/b"), { data: { user: "u", pass: "p2" }, version: 2 });
    const last = vault.requests.at(-1);
    assert.equal(last?.token, "root-token");
    assert.equal(last?.vaultRequest, "true");
    assert.equal(last?.path, "/v1/secret/data/a/b");
  });

  it("VaultKvClient refuses a write whose check-and-set version is not the newest", async () => {
    const kv = client();
    await kv.write("cas/x", { v: "1" }, 0);
    await assert.rejects(kv.write("cas/x", { v: "2" }, 0), (e: VaultError) => e.reason === "CheckAndSetFailed");
    await assert.rejects(kv.write("cas/x", { v: "2" }, 5), (e: VaultError) => e.reason === "CheckAndSetFailed");
    assert.deepEqual(vault.peek("", "cas/x"), { data: { v: "1" }, version: 1 });
  });

  it("VaultKvClient reports 403, sealed and unreachable stores without the token in the message", async () => {
    await assert.rejects(client("wrong").read("a/b"), (e: VaultError) => {
      assert.equal(e.reason, "PermissionDenied");
      assert.doesNotMatch(e.message, /wrong/);
      return true;
    });
    await assert.rejects(client("reader").write("a/c", { x: "y" }), (e: VaultError) => e.reason === "PermissionDenied");
    vault.sealed = true;
    try {
      await assert.rejects(client().read("a/b"), (e: VaultError) => e.reason === "Sealed" && e.status === 503);
    } finally {
      vault.sealed = false;
    }
    const gone = new VaultKvClient({ address: "http://127.0.0.1:1", token: "root-token", timeoutMs: 2000 });
    await assert.rejects(
      gone.read("a/b"),
      (e: VaultError) => e.reason === "Unreachable" && !/root-token/.test(e.message),
    );
  });

  it("VaultKvClient sends X-Vault-Namespace, and a namespace's tokens and secrets stay in it", async () => {
    const team = client("team-token", { namespace: "team" });
    assert.equal(await team.write("apps/db", { password: "x" }), 1);
    assert.deepEqual(vault.peek("team", "apps/db")?.data, { password: "x" });
    assert.equal(vault.peek("", "apps/db"), undefined);
    assert.equal(vault.requests.at(-1)?.namespace, "team");
    await assert.rejects(client("team-token").read("apps/db"), (e: VaultError) => e.reason === "PermissionDenied");
    await assert.rejects(team.read("other/db"), (e: VaultError) => e.reason === "PermissionDenied");
  });

  it("VaultKvClient.destroy() removes every version; a soft-deleted newest version reads as none", async () => {
    const kv = client();
    await kv.write("gone/x", { a: "1" });
    vault.put("", "gone/y", { b: "2" });
    await kv.destroy("gone/x");
    assert.equal(await kv.read("gone/x"), undefined);
    await kv.destroy("never/written");
    assert.equal((await kv.read("gone/y"))?.version, 1);
  });

  it("VaultKvClient refuses TLS it cannot verify unless skipTLSVerify", async () => {
    const unverified = new VaultKvClient({ address: vault.address, token: "root-token" });
    await assert.rejects(unverified.read("a/b"), (e: VaultError) => e.reason === "Unreachable");
    const skipping = new VaultKvClient({ address: vault.address, token: "root-token", skipTLSVerify: true });
    assert.equal((await skipping.read("a/b"))?.version, 2);
  });

  it("kvPath() escapes segments and refuses . and ..", () => {
    assert.equal(
      kvPath("virtualcluster-platform", "projects/p1", "db pass"),
      "virtualcluster-platform/projects/p1/db%20pass",
    );
    assert.throws(() => kvPath("a", ".."));
  });
});
