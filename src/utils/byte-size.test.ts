import assert from "node:assert/strict";
import { test } from "node:test";
import { formatBytes, parseByteSize } from "./byte-size.ts";

test("formatBytes() writes binary units with one decimal from MiB up", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(2048), "2 KiB");
  assert.equal(formatBytes(1.5 * 1024 ** 2), "1.5 MiB");
  assert.equal(formatBytes(8 * 1024 ** 3), "8.0 GiB");
  assert.equal(formatBytes(300 * 1024 ** 2), "300 MiB");
});

test("parseByteSize() reads plain bytes and binary or decimal suffixes, and refuses the rest", () => {
  assert.equal(parseByteSize("1048576"), 1048576);
  assert.equal(parseByteSize("512Mi"), 512 * 1024 ** 2);
  assert.equal(parseByteSize("2Gi"), 2 * 1024 ** 3);
  assert.equal(parseByteSize("1.5Gi"), 1.5 * 1024 ** 3);
  assert.equal(parseByteSize("8G"), 8e9);
  assert.equal(parseByteSize("0"), 0);
  for (const bad of ["", "-1", "1.5", "12MB", "Gi", "1e9", "2 Gi x"]) assert.equal(parseByteSize(bad), undefined, bad);
});
