import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  formatEncryptionKeys,
  generateEncryptionKey,
  parseEncryptionKeys,
  readEncryptionKeys,
  writeEncryptionKeys,
} from "./encryption-key-file.ts";

const dir = await mkdtemp(join(tmpdir(), "vcp-keyfile-"));
after(() => rm(dir, { recursive: true, force: true }));

describe("encryption key file", () => {
  it("formatEncryptionKeys() and parseEncryptionKeys() round-trip, first key first", () => {
    const keys = [generateEncryptionKey(), generateEncryptionKey()];
    const parsed = parseEncryptionKeys(formatEncryptionKeys(keys), "f");
    assert.deepEqual(
      parsed.map((k) => Buffer.from(k).toString("hex")),
      keys.map((k) => Buffer.from(k).toString("hex")),
    );
  });

  it("parseEncryptionKeys() takes openssl rand -base64 32 output, URL-safe base64, comments and blank lines", () => {
    const key = generateEncryptionKey();
    const text = `# mine\n\n  ${Buffer.from(key).toString("base64url")}  \r\n`;
    assert.deepEqual(Buffer.from(parseEncryptionKeys(text, "f")[0]), Buffer.from(key));
  });

  it("parseEncryptionKeys() names the file and line of a bad key without echoing it", () => {
    assert.throws(() => parseEncryptionKeys("# c\nnot a key!\n", "/etc/k"), /\/etc\/k line 2 is not a base64 key/);
    const short = Buffer.from("sixteen bytes!!!").toString("base64");
    assert.throws(
      () => parseEncryptionKeys(short, "/etc/k"),
      (error: Error) => /line 1 holds a 16-byte key/.test(error.message) && !error.message.includes(short),
    );
    assert.throws(() => parseEncryptionKeys("# only comments\n", "/etc/k"), /holds no encryption key/);
  });

  it("writeEncryptionKeys() writes 0600, replaces atomically, and with exclusive never overwrites", async () => {
    const file = join(dir, "encryption.key");
    const first = [generateEncryptionKey()];
    await writeEncryptionKeys(file, first, { exclusive: true });
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    await assert.rejects(writeEncryptionKeys(file, [generateEncryptionKey()], { exclusive: true }), /EEXIST/);
    assert.deepEqual(
      await readEncryptionKeys(file),
      first.map((k) => Buffer.from(k)),
    );
    const second = [generateEncryptionKey(), ...first];
    await writeEncryptionKeys(file, second);
    assert.equal((await readEncryptionKeys(file))?.length, 2);
    assert.match(await readFile(file, "utf8"), /^# virtualcluster-platform/);
  });

  it("readEncryptionKeys() is undefined for a missing file and fails on an unreadable one", async () => {
    assert.equal(await readEncryptionKeys(join(dir, "absent")), undefined);
    await writeFile(join(dir, "bad"), "zz\n");
    await assert.rejects(readEncryptionKeys(join(dir, "bad")), /line 1/);
  });
});
