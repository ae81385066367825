import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { formatContextPath } from "./path-format.ts";
import { pathsMayOverlap } from "./path-overlap.ts";
import { parsePatchPath } from "./path-parse.ts";

const overlap = (a: string, b: string) => pathsMayOverlap(parsePatchPath(a), parsePatchPath(b));

test("pathsMayOverlap() sees prefixes, wildcards and sibling indices", () => {
  assert.equal(overlap("metadata.labels", "metadata.labels.app"), true);
  assert.equal(overlap("", "anything"), true);
  assert.equal(overlap("a[*].b", "a.0.b"), true);
  assert.equal(overlap('a["x"]', "a[*]"), true);
  assert.equal(overlap("list[0]", "list[1].x"), true);
  assert.equal(overlap("metadata.labels.app", "metadata.annotations.app"), false);
  assert.equal(overlap("subsets[0].ports[0].name", "subsets[*].addresses[*].hostname"), false);
  assert.equal(overlap("a.b", "a.c"), false);
});

test("pathsMayOverlap() is symmetric and true whenever one concrete path reaches the other", () => {
  const key = fc.constantFrom("a", "b", "0", "1", "*");
  fc.assert(
    fc.property(fc.array(key, { maxLength: 4 }), fc.array(key, { maxLength: 4 }), (a, b) => {
      const pa = parsePatchPath(formatContextPath(a));
      const pb = parsePatchPath(formatContextPath(b));
      assert.equal(pathsMayOverlap(pa, pb), pathsMayOverlap(pb, pa));
      const concreteA = a.filter((k) => k !== "*");
      if (concreteA.length === a.length && b.length <= a.length && b.every((k, i) => k === "*" || k === a[i])) {
        assert.equal(pathsMayOverlap(pa, pb), true);
      }
    }),
  );
});
