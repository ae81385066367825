import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { checkDataDirPermissions, InsecurePermissionsError } from "./data-dir-permissions.ts";

describe("checkDataDirPermissions()", () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "vcp-perm-unit-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const fresh = async (name: string) => {
    const dir = join(root, name);
    await mkdir(join(dir, "pki"), { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    await writeFile(join(dir, "platform.db"), "", { mode: 0o600 });
    await writeFile(join(dir, "pki", "ca.key"), "", { mode: 0o600 });
    return dir;
  };

  it("checkDataDirPermissions() accepts a private data directory and a missing one", async () => {
    await checkDataDirPermissions(await fresh("private"));
    await checkDataDirPermissions(join(root, "not-there"));
  });

  it("checkDataDirPermissions() refuses group or other bits on the directory, its pki/ or a file in them", async () => {
    for (const [relative, mode] of [
      ["", 0o750],
      ["pki", 0o701],
      ["platform.db", 0o640],
      ["pki/ca.key", 0o604],
    ] as const) {
      const dir = await fresh(`case-${mode.toString(8)}`);
      const path = relative ? join(dir, relative) : dir;
      await chmod(path, mode);
      await assert.rejects(checkDataDirPermissions(dir), (error: Error) => {
        assert.ok(error instanceof InsecurePermissionsError);
        assert.ok(error.message.startsWith(`${path} can be read or written by group or others`), error.message);
        assert.ok(error.message.includes(`chmod -R go-rwx ${dir}`), error.message);
        return true;
      });
    }
  });

  it("checkDataDirPermissions() refuses an open key file outside the data directory with its own fix", async () => {
    const dir = await fresh("with-key");
    const key = join(root, "tls.key");
    await writeFile(key, "", { mode: 0o644 });
    await chmod(key, 0o644);
    await assert.rejects(checkDataDirPermissions(dir, [key]), new RegExp(`chmod 600 ${key}`));
  });

  it("checkDataDirPermissions() follows a data directory that is a symbolic link to a private one", async () => {
    const target = await fresh("linked-target");
    const link = join(root, "linked");
    await symlink(target, link);
    await checkDataDirPermissions(link);
  });

  it("checkDataDirPermissions() counts the other open paths", async () => {
    const dir = await fresh("several");
    await chmod(join(dir, "platform.db"), 0o644);
    await chmod(join(dir, "pki", "ca.key"), 0o644);
    await assert.rejects(checkDataDirPermissions(dir), /\(and 1 more\)/);
  });
});
