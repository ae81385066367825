import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { gunzipSync, gzipSync } from "node:zlib";
import { loadConsoleFiles, precompressConsole } from "./console-files.ts";

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

  it("precompressConsole() writes the gzips that loadConsoleFiles() then takes instead of compressing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "console-files-"));
    try {
      await mkdir(join(dir, "assets"));
      await writeFile(join(dir, "index.html"), "<html><head></head></html>");
      const script = `console.log(${JSON.stringify("y".repeat(4000))});`;
      await writeFile(join(dir, "assets", "index-def.js"), script);
      await writeFile(join(dir, "assets", "small.css"), "a{}");
      await precompressConsole(dir);
      assert.deepEqual((await readdir(join(dir, "assets"))).sort(), ["index-def.js", "index-def.js.gz", "small.css"]);
      assert.equal(gunzipSync(await readFile(join(dir, "assets", "index-def.js.gz"))).toString(), script);
      // The build's gzip is what is served: a level other than the platform's own shows it was taken, not redone.
      const stored = gzipSync(script, { level: 1 });
      await writeFile(join(dir, "assets", "index-def.js.gz"), stored);
      const loaded = await loadConsoleFiles(dir);
      assert.deepEqual([...loaded.files.keys()].sort(), ["/assets/index-def.js", "/assets/small.css"]);
      assert.deepEqual(loaded.files.get("/assets/index-def.js")?.gzip, stored);
      assert.equal(loaded.files.get("/assets/index-def.js")?.body.toString(), script);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("loadConsoleFiles() compresses a file whose .gz holds something else (another build's, or not gzip)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "console-files-"));
    try {
      await mkdir(join(dir, "assets"));
      await writeFile(join(dir, "index.html"), "<html><head></head></html>");
      const script = `console.log(${JSON.stringify("z".repeat(4000))});`;
      await writeFile(join(dir, "assets", "a.js"), script);
      await writeFile(join(dir, "assets", "a.js.gz"), gzipSync(script.replace("z", "q")));
      await writeFile(join(dir, "assets", "b.css"), `b{content:"${"b".repeat(3000)}"}`);
      await writeFile(join(dir, "assets", "b.css.gz"), "not gzip at all, long enough to have a trailer");
      await writeFile(join(dir, "assets", "data.bin.gz"), gzipSync("a file shipped gzipped, with no file beside it"));
      const loaded = await loadConsoleFiles(dir);
      assert.deepEqual([...loaded.files.keys()].sort(), ["/assets/a.js", "/assets/b.css", "/assets/data.bin.gz"]);
      assert.equal(gunzipSync(loaded.files.get("/assets/a.js")?.gzip ?? Buffer.alloc(0)).toString(), script);
      assert.match(gunzipSync(loaded.files.get("/assets/b.css")?.gzip ?? Buffer.alloc(0)).toString(), /^b\{content/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("loadConsoleFiles() answers 'not built' for a missing build instead of failing the start", async () => {
    assert.equal((await loadConsoleFiles(undefined)).index, undefined);
    assert.equal((await loadConsoleFiles(join(tmpdir(), "no-such-console-build"))).index, undefined);
  });
});
