import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator } from "../translate/translator.ts";
import { OBJECT_UID_ANNOTATION } from "./constants.ts";
import { hostSnapshotOf, reverseMetadata, snapshotOf } from "./reverse-metadata.ts";
import type { WireObject } from "./types.ts";

const translator = createTranslator({ name: "vc", namespace: "vc-host" });
const object = (labels: Record<string, string>, annotations: Record<string, string>): WireObject => ({
  metadata: { name: "x", namespace: "default", labels, annotations },
});

const virtualThen = object({ app: "web" }, { note: "a" });
const hostThen = object(
  { app: "web", [MANAGED_BY_LABEL]: "vc", [NAMESPACE_LABEL]: "default" },
  { note: "a", [OBJECT_UID_ANNOTATION]: "u" },
);
const last = { virtual: snapshotOf(virtualThen), host: hostSnapshotOf(hostThen, translator) };

test("reverseMetadata() carries a host-side annotation and label change back to the virtual object", () => {
  const host = object(
    { app: "web", tier: "front", [MANAGED_BY_LABEL]: "vc", [NAMESPACE_LABEL]: "default" },
    { note: "b", added: "c", [OBJECT_UID_ANNOTATION]: "u" },
  );
  const result = reverseMetadata({ virtual: virtualThen, host, reversed: host, last, translator });
  assert.deepEqual(result, { labels: { app: "web", tier: "front" }, annotations: { note: "b", added: "c" } });
});

test("reverseMetadata() takes the values of the reverse-patched host object", () => {
  const host = object({ ...hostThen.metadata!.labels }, { note: "host-b" });
  const reversed = object({ ...hostThen.metadata!.labels }, { note: "b" });
  const result = reverseMetadata({ virtual: virtualThen, host, reversed, last, translator });
  assert.equal(result?.annotations.note, "b");
});

test("reverseMetadata() lets a virtual change win over a host change of the same key", () => {
  const virtual = object({ app: "web" }, { note: "virtual" });
  const host = object({ ...hostThen.metadata!.labels }, { note: "host", [OBJECT_UID_ANNOTATION]: "u" });
  assert.equal(reverseMetadata({ virtual, host, reversed: host, last, translator }), undefined);
});

test("reverseMetadata() removes a key removed on the host and never copies markers or syncer annotations", () => {
  const host = object({ [MANAGED_BY_LABEL]: "other", [NAMESPACE_LABEL]: "x" }, { [OBJECT_UID_ANNOTATION]: "forged" });
  const result = reverseMetadata({ virtual: virtualThen, host, reversed: host, last, translator });
  assert.deepEqual(result, { labels: {}, annotations: {} });
});

test("reverseMetadata() changes nothing without a last sync or without host changes", () => {
  assert.equal(
    reverseMetadata({ virtual: virtualThen, host: hostThen, reversed: hostThen, last: undefined, translator }),
    undefined,
  );
  assert.equal(
    reverseMetadata({ virtual: virtualThen, host: hostThen, reversed: hostThen, last, translator }),
    undefined,
  );
});

test("reverseMetadata() restores a reserved label key from its host form", () => {
  const host = object({ ...hostThen.metadata!.labels, [translator.hostLabelKey("release")]: "r2" }, {});
  const result = reverseMetadata({
    virtual: virtualThen,
    host,
    reversed: host,
    last: { ...last, host: { ...last.host, annotations: {} } },
    translator,
  });
  assert.deepEqual(result?.labels, { app: "web", release: "r2" });
});

test("reverseMetadata() applied to the virtual object makes it equal the host's view (for any host edit)", () => {
  const map = fc.dictionary(fc.constantFrom("a", "b", "c", "d"), fc.constantFrom("1", "2"));
  fc.assert(
    fc.property(map, map, (annotations, edited) => {
      const virtual = object({}, annotations);
      const lastPair = { virtual: snapshotOf(virtual), host: hostSnapshotOf(object({}, annotations), translator) };
      const host = object({}, { ...edited });
      const result = reverseMetadata({ virtual, host, reversed: host, last: lastPair, translator });
      assert.deepEqual(result?.annotations ?? { ...annotations }, { ...edited });
    }),
  );
});

test("hostSnapshotOf() keeps only the labels and annotations that can move back (no markers, no syncer annotations)", () => {
  const reserved = translator.hostLabelKey("release");
  const host = object({ ...hostThen.metadata!.labels, [reserved]: "r1" }, hostThen.metadata!.annotations!);
  assert.deepEqual(hostSnapshotOf(host, translator), {
    labels: { app: "web", [reserved]: "r1" },
    annotations: { note: "a" },
  });
  assert.deepEqual(hostSnapshotOf(undefined, translator), { labels: {}, annotations: {} });
});
