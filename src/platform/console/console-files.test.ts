import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { loadConsoleFiles } from "./console-files.ts";

describe("loadConsoleFiles()", () => {
  it("loadConsoleFiles() reads the page template and every asset, gzipping the larger text files", async () => {
    const dir = await mkdtemp(join(tmpdir(), "console-files-"));
    try {
      await mkdir(join(dir, "assets"));
      await writeFile(join(dir, "index.html"), "<html><head></head></html>");
      const script = `console.log(${JSON.stringify("x".repeat(4000))});`;
      await writeFile(join(dir, "assets", "index-abc.js"), script);
      await writeFile(join(dir, "assets", "logo.png"), Buffer.from([137, 80, 78, 71]));
      const loaded = await loadConsoleFiles(dir);
      assert.equal(loaded.index, "<html><head></head></html>");
      assert.deepEqual([...loaded.files.keys()].sort(), ["/assets/index-abc.js", "/assets/logo.png"]);
      const js = loaded.files.get("/assets/index-abc.js");
      assert.equal(js?.contentType, "text/javascript; charset=utf-8");
      assert.equal(gunzipSync(js?.gzip ?? Buffer.alloc(0)).toString(), script);
      assert.equal(js?.body.toString(), script, "a client without gzip gets the file as built");
      assert.equal(loaded.files.get("/assets/logo.png")?.gzip, undefined, "images are not gzipped");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("loadConsoleFiles() answers 'not built' for a missing build instead of failing the start", async () => {
    assert.equal((await loadConsoleFiles(undefined)).index, undefined);
    assert.equal((await loadConsoleFiles(join(tmpdir(), "no-such-console-build"))).index, undefined);
  });
});
