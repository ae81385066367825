import assert from "node:assert/strict";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { AdminTokenAuthenticator, ensureAdminToken } from "./admin-token.ts";

describe("admin token", () => {
  it("ensureAdminToken() creates a 0600 file once and returns the same token later", async () => {
    const dir = await mkdtemp(join(tmpdir(), "vc-token-"));
    try {
      const first = await ensureAdminToken(dir);
      assert.match(first, /^[A-Za-z0-9_-]{43}$/);
      assert.equal((await stat(join(dir, "admin-token"))).mode & 0o777, 0o600);
      assert.equal(await ensureAdminToken(dir), first);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("AdminTokenAuthenticator recognizes only the exact token", async () => {
    const auth = new AdminTokenAuthenticator("secret-token");
    const as = (authorization?: string) => auth.authenticate({ headers: authorization ? { authorization } : {} });
    assert.deepEqual((await as("Bearer secret-token"))?.groups.includes("system:masters"), true);
    assert.equal(await as("Bearer secret-toke"), undefined);
    assert.equal(await as("Bearer secret-token2"), undefined);
    assert.equal(await as("Basic c2VjcmV0"), undefined);
    assert.equal(await as(), undefined);
  });
});
