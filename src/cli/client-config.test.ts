import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { configPath, readClientConfig, requireLogin, writeClientConfig } from "./client-config.ts";
import { CommandError } from "./command-error.ts";

const root = mkdtempSync(join(tmpdir(), "vc-client-config-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshHome = () => join(root, `home-${n++}`);
const mode = (path: string) => statSync(path).mode & 0o777;

describe("client config", () => {
  it("configPath() is config.json in the home directory", () => {
    assert.equal(configPath("/x/y"), join("/x/y", "config.json"));
  });

  it("writeClientConfig() creates the directory 0700 and the file 0600, and readClientConfig() reads it back", () => {
    const path = configPath(freshHome());
    const config = { platform: { host: "https://h", accessKey: "k", insecure: true } };
    writeClientConfig(config, path);
    assert.equal(mode(join(path, "..")), 0o700);
    assert.equal(mode(path), 0o600);
    assert.deepEqual(readClientConfig(path), config);
  });

  it("writeClientConfig() rewrites a file and directory that were readable by others with 0600 and 0700", () => {
    const home = freshHome();
    mkdirSync(home, { mode: 0o755 });
    chmodSync(home, 0o755);
    const path = configPath(home);
    writeFileSync(path, "{}", { mode: 0o644 });
    chmodSync(path, 0o644);
    writeClientConfig({ platform: { host: "https://h", accessKey: "k" } }, path);
    assert.equal(mode(path), 0o600);
    assert.equal(mode(home), 0o700);
  });

  it("writeClientConfig() keeps sections other commands stored", () => {
    const path = configPath(freshHome());
    writeClientConfig({ platform: { host: "https://h" }, runtime: { pids: [1] } }, path);
    const config = readClientConfig(path);
    config.platform = { host: "https://other", accessKey: "k2" };
    writeClientConfig(config, path);
    assert.deepEqual(JSON.parse(readFileSync(path, "utf8")).runtime, { pids: [1] });
  });

  it("readClientConfig() is empty without a file and one clear line for a broken one", () => {
    const home = freshHome();
    assert.deepEqual(readClientConfig(configPath(home)), {});
    mkdirSync(home);
    for (const [text, pattern] of [
      ["{not json", /not valid JSON/],
      ["[]", /must be a JSON object/],
      ['{"platform": {"accessKey": "k"}}', /platform\.host must be a string/],
      ['{"platform": {"host": "https://h", "insecure": "yes"}}', /platform\.insecure must be true or false/],
    ] as const) {
      writeFileSync(configPath(home), text);
      assert.throws(
        () => readClientConfig(configPath(home)),
        (error: Error) => error instanceof CommandError && pattern.test(error.message) && error.message.includes(home),
      );
    }
  });

  it("requireLogin() says how to log in when no key is stored", () => {
    assert.throws(() => requireLogin({}), /not logged in to a platform: run `virtualcluster platform login/);
    assert.throws(() => requireLogin({ platform: { host: "https://h" } }), /not logged in/);
    assert.equal(requireLogin({ platform: { host: "https://h", accessKey: "k" } }).accessKey, "k");
  });
});
