import assert from "node:assert/strict";
import { test } from "node:test";
import { pathCovers } from "./path-covers.ts";
import { parsePatchPath } from "./path-parse.ts";

test("pathCovers() matches keys, wildcards and enclosing paths, never deeper or different ones", () => {
  const keys = ["metadata", "annotations", "example.com/note"];
  assert.equal(pathCovers(parsePatchPath('metadata.annotations["example.com/note"]'), keys), true);
  assert.equal(pathCovers(parsePatchPath("metadata.annotations[*]"), keys), true);
  assert.equal(pathCovers(parsePatchPath("metadata.annotations"), keys), true);
  assert.equal(pathCovers(parsePatchPath(""), keys), true, "the whole object");
  assert.equal(pathCovers(parsePatchPath("metadata.labels[*]"), keys), false);
  assert.equal(pathCovers(parsePatchPath('metadata.annotations["other"]'), keys), false);
  assert.equal(pathCovers(parsePatchPath('metadata.annotations["example.com/note"].x'), keys), false);
  assert.equal(pathCovers(parsePatchPath("subsets[*].ports[0].name"), ["subsets", 1, "ports", 0, "name"]), true);
  assert.equal(pathCovers(parsePatchPath("subsets[*].ports[0].name"), ["subsets", 1, "ports", 1, "name"]), false);
});
