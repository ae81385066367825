import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { formatContextPath } from "./path-format.ts";
import { findPathMatches, removeAtMatch, setAtMatch, valueAtPath } from "./path-navigate.ts";
import { parsePatchPath } from "./path-parse.ts";

const matches = (root: unknown, path: string) => findPathMatches(root, parsePatchPath(path));
const paths = (root: unknown, path: string) => matches(root, path).map((m) => formatContextPath(m.keys));

const object = {
  metadata: { name: "x", annotations: { "a.b/c": "1", plain: "2" } },
  spec: {
    servers: [{ hosts: ["h1", "h2"] }, { hosts: ["h3"] }, { port: 80 }],
    rules: { "test.object.other": ["r0", "r1"] },
  },
};

test("findPathMatches() with the empty path matches the whole object", () => {
  const [whole] = matches(object, "");
  assert.equal(whole.value, object);
  assert.equal(whole.parent, undefined);
  assert.equal(formatContextPath(whole.keys), "");
});

test("findPathMatches() fans out over nested wildcards in document order", () => {
  assert.deepEqual(paths(object, "spec.servers[*].hosts[*]"), [
    "spec.servers.0.hosts.0",
    "spec.servers.0.hosts.1",
    "spec.servers.1.hosts.0",
  ]);
  assert.deepEqual(
    matches(object, "spec.servers[*].hosts[*]").map((m) => m.value),
    ["h1", "h2", "h3"],
  );
});

test("findPathMatches() fans out over map values and quotes keys with dots in context.path", () => {
  assert.deepEqual(paths(object, "metadata.annotations[*]"), [
    'metadata.annotations."a.b/c"',
    "metadata.annotations.plain",
  ]);
  assert.deepEqual(paths(object, "spec.rules.*.1"), ['spec.rules."test.object.other".1']);
});

test("findPathMatches() skips missing intermediate paths silently", () => {
  assert.deepEqual(matches(object, "spec.missing.deeper"), []);
  assert.deepEqual(matches(object, 'spec.missing["key"]'), []);
  assert.deepEqual(matches(object, "metadata.name.length"), []);
  assert.deepEqual(matches(object, "spec.servers.7"), []);
  assert.deepEqual(matches(object, "spec.servers.x"), []);
});

test("findPathMatches() evaluates a final bracketed key even when missing, a plain key only when present", () => {
  const [added] = matches(object, 'metadata.annotations["new"]');
  assert.equal(added.exists, false);
  assert.equal(added.value, undefined);
  assert.deepEqual(matches(object, "metadata.annotations.new"), []);
  assert.equal(matches(object, 'metadata.annotations["plain"]')[0].exists, true);
  // The rule is for maps only: an index past the end of an array is not added.
  assert.deepEqual(matches(object, "spec.servers[9]"), []);
});

test("findPathMatches() never walks into prototypes", () => {
  const root = { a: {} };
  assert.deepEqual(matches(root, "a.constructor"), []);
  assert.deepEqual(matches(root, "a.__proto__"), []);
  const [proto] = matches(root, 'a["__proto__"]');
  assert.equal(proto.exists, false);
  setAtMatch(proto, { polluted: true });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.getPrototypeOf(root.a), Object.prototype);
  assert.deepEqual(Object.keys(root.a), ["__proto__"]);
});

test("setAtMatch() and removeAtMatch() edit maps and arrays", () => {
  const root = { list: [1, 2, 3], map: { a: 1, b: 2 } };
  setAtMatch(matches(root, "list.1")[0], 20);
  removeAtMatch(matches(root, "list.0")[0]);
  removeAtMatch(matches(root, "map.a")[0]);
  setAtMatch(matches(root, 'map["c"]')[0], 3);
  assert.deepEqual(root, { list: [20, 3], map: { b: 2, c: 3 } });
});

test("valueAtPath() returns the first existing match", () => {
  assert.equal(valueAtPath(object, parsePatchPath("metadata.name"))?.value, "x");
  assert.equal(valueAtPath(object, parsePatchPath('metadata["nope"]')), undefined);
});

// Every leaf of a random JSON value is found again through the path printed for it.
const jsonKey = fc
  .string({ unit: fc.constantFrom("a", "b", ".", "[", "]", "-"), minLength: 1 })
  .filter((k) => k !== "*");
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(jsonKey, tie("value"), { maxKeys: 4 }),
  ),
})).value;

function leaves(value: unknown, keys: (string | number)[] = []): [(string | number)[], unknown][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, [...keys, index]));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => leaves(item, [...keys, key]));
  }
  return [[keys, value]];
}

test("findPathMatches() finds every leaf through its context.path", () => {
  fc.assert(
    fc.property(jsonValue, (root) => {
      for (const [keys, value] of leaves(root)) {
        const found = findPathMatches(root, parsePatchPath(formatContextPath(keys)));
        assert.equal(found.length, 1);
        assert.deepEqual(found[0].keys, keys);
        assert.deepEqual(found[0].value, value);
      }
    }),
  );
});

test("findPathMatches() with a wildcard returns one match per child, each reachable by its path", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.array(jsonValue, { maxLength: 5 }), fc.dictionary(jsonKey, jsonValue, { maxKeys: 5 })),
      (container) => {
        const root = { c: container };
        const found = findPathMatches(root, parsePatchPath("c[*]"));
        assert.equal(found.length, Object.keys(container).length);
        for (const match of found) {
          const again = findPathMatches(root, parsePatchPath(formatContextPath(match.keys)));
          assert.deepEqual(again[0].value, match.value);
        }
      },
    ),
  );
});
