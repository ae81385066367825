import assert from "node:assert/strict";
import { test } from "node:test";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "./constants.ts";
import { labelKeyTranslator } from "./label-keys.ts";
import { hostSelector, selectorShape, virtualSelector } from "./selectors.ts";

const keys = labelKeyTranslator("vc");
const markers = { virtualClusterName: "vc", virtualNamespace: "default" };

test("selectorShape() tells label selectors from string maps", () => {
  assert.equal(selectorShape({ matchLabels: { a: "b" } }), "selector");
  assert.equal(selectorShape({ matchExpressions: [] }), "selector");
  assert.equal(selectorShape({ app: "x" }), "map");
  assert.equal(selectorShape({}), "map");
  assert.equal(selectorShape({ app: 1 }), undefined);
  assert.equal(selectorShape("app=x"), undefined);
  assert.equal(selectorShape([]), undefined);
});

test("hostSelector() translates a map selector like synced labels", () => {
  assert.deepEqual(hostSelector({ app: "web", release: "r" }, keys, markers), {
    app: "web",
    [keys.host("release")]: "r",
    [MANAGED_BY_LABEL]: "vc",
    [NAMESPACE_LABEL]: "default",
  });
});

test("hostSelector() translates matchLabels and matchExpressions keys", () => {
  const result = hostSelector(
    {
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "release", operator: "In", values: ["a", "b"] }],
    },
    keys,
    markers,
  );
  assert.deepEqual(result, {
    matchLabels: { app: "web", [MANAGED_BY_LABEL]: "vc", [NAMESPACE_LABEL]: "default" },
    matchExpressions: [{ key: keys.host("release"), operator: "In", values: ["a", "b"] }],
  });
});

test("virtualSelector() reverses hostSelector()", () => {
  const selector = {
    matchLabels: { app: "web", release: "x" },
    matchExpressions: [{ key: "release", operator: "Exists" }],
  };
  assert.deepEqual(virtualSelector(hostSelector(selector, keys, markers), keys), selector);
  assert.deepEqual(virtualSelector(hostSelector({ a: "b" }, keys, markers), keys), { a: "b" });
});

test("hostSelector() rejects values that are not selectors", () => {
  assert.throws(() => hostSelector("app=web", keys, markers), /not a label selector/);
  assert.throws(() => hostSelector({ matchLabels: { a: 1 } }, keys, markers), /matchLabels must be a map of strings/);
  assert.throws(() => hostSelector({ matchExpressions: [{ operator: "In" }] }, keys, markers), /key must be a string/);
});
