import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { CONTROLLED_BY_LABEL, MANAGED_BY_LABEL, NAMESPACE_LABEL } from "./constants.ts";
import { labelKeyTranslator } from "./label-keys.ts";
import { hostLabels, virtualLabels } from "./labels.ts";
import { safeConcatName, shortHash } from "./safe-concat.ts";

const keys = labelKeyTranslator("my-vc");

test("hostLabels() copies labels and adds the managed-by and namespace markers", () => {
  assert.deepEqual(
    hostLabels({ app: "web", tier: "db" }, keys, { virtualClusterName: "my-vc", virtualNamespace: "prod" }),
    {
      app: "web",
      tier: "db",
      [MANAGED_BY_LABEL]: "my-vc",
      [NAMESPACE_LABEL]: "prod",
    },
  );
});

test("hostLabels() rewrites the reserved keys with the safe concatenation rule", () => {
  const result = hostLabels({ release: "r1", [NAMESPACE_LABEL]: "spoof" }, keys, {
    virtualClusterName: "my-vc",
    virtualNamespace: "prod",
  });
  const releaseKey = safeConcatName("virtualcluster.platform.sh/label", "my-vc", "x", shortHash("release"));
  assert.equal(releaseKey, `virtualcluster.platform.sh/label-my-vc-x-${shortHash("release")}`);
  assert.equal(result[releaseKey], "r1");
  assert.equal(result[NAMESPACE_LABEL], "prod");
  assert.equal(result[keys.host(NAMESPACE_LABEL)], "spoof");
  assert.equal(result.release, undefined);
});

test("hostLabels() drops virtual labels that imitate a rewritten key", () => {
  const forged = keys.host("release");
  assert.equal(hostLabels({ [forged]: "x" }, keys, { virtualClusterName: "my-vc" })[forged], undefined);
});

test("virtualLabels() removes markers and restores reserved keys", () => {
  const host = hostLabels({ app: "web", release: "r1", [CONTROLLED_BY_LABEL]: "c" }, keys, {
    virtualClusterName: "my-vc",
    virtualNamespace: "prod",
  });
  assert.deepEqual(virtualLabels({ ...host, [CONTROLLED_BY_LABEL]: "host-controller" }, keys), {
    app: "web",
    release: "r1",
    [CONTROLLED_BY_LABEL]: "c",
  });
});

test("hostLabels() keeps __proto__ as a plain key", () => {
  const labels = JSON.parse('{"__proto__": "x"}');
  const result = hostLabels(labels, keys, { virtualClusterName: "v" });
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(result, "__proto__")?.value, "x");
});

test("virtualLabels(hostLabels(x)) is x for any labels", () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.string()), fc.string({ minLength: 1 }), (labels, namespace) => {
      const reserved = new Set([keys.host("release"), keys.host(NAMESPACE_LABEL), keys.host(MANAGED_BY_LABEL)]);
      const clean = Object.fromEntries(Object.entries(labels).filter(([key]) => !reserved.has(key)));
      const host = hostLabels(clean, keys, { virtualClusterName: "my-vc", virtualNamespace: namespace });
      const back = virtualLabels(host, keys);
      assert.deepEqual(back, clean);
    }),
  );
});
