import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { IMAGE_INPUTS, imageInputsHash } from "./image-inputs.ts";

describe("imageInputsHash()", () => {
  const repo = mkdtempSync(join(tmpdir(), "vc-image-inputs-"));
  after(() => rmSync(repo, { recursive: true, force: true }));
  for (const input of IMAGE_INPUTS) {
    if (input.includes(".")) writeFileSync(join(repo, input), `${input}\n`);
    else mkdirSync(join(repo, input), { recursive: true });
  }
  writeFileSync(join(repo, "src", "a.ts"), "export const a = 1;\n");

  it("changes with the content of a shipped file, and only with what the image is made of", () => {
    const first = imageInputsHash(repo, ["bookworm"]);
    assert.equal(imageInputsHash(repo, ["bookworm"]), first, "the same inputs, the same hash");
    writeFileSync(join(repo, "src", "a.test.ts"), "test\n");
    writeFileSync(join(repo, "README.md"), "docs\n");
    mkdirSync(join(repo, "src", "node_modules"), { recursive: true });
    writeFileSync(join(repo, "src", "node_modules", "x.js"), "x\n");
    assert.equal(imageInputsHash(repo, ["bookworm"]), first, "tests, the README and node_modules are not in it");
    assert.notEqual(imageInputsHash(repo, ["trixie"]), first, "the Debian suite is");
    writeFileSync(join(repo, "src", "a.ts"), "export const a = 2;\n");
    const changed = imageInputsHash(repo, ["bookworm"]);
    assert.notEqual(changed, first);
    cpSync(join(repo, "src", "a.ts"), join(repo, "src", "b.ts"));
    assert.notEqual(imageInputsHash(repo, ["bookworm"]), changed, "a new file");
  });
});
