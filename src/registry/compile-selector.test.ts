import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isStatusError } from "../apimachinery/errors.ts";
import { parseFieldSelector } from "../apimachinery/field-selector.ts";
import { parseLabelSelector } from "../apimachinery/label-selector.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import { compileSelector } from "./compile-selector.ts";
import { thingDefinition } from "./testing.ts";
import type { ResourceDefinition } from "./types.ts";

const typed: ResourceDefinition = {
  ...thingDefinition,
  namespaced: true,
  selectableFields: { "spec.type": (object) => (object.spec as { type?: string } | undefined)?.type },
};

function thing(name: string, namespace?: string, labels?: Record<string, string>, type?: string): KubeObject {
  const object: KubeObject = { apiVersion: "test.platform.sh/v1", kind: "Thing", metadata: { name } };
  if (namespace !== undefined) object.metadata.namespace = namespace;
  if (labels) object.metadata.labels = labels;
  if (type !== undefined) object.spec = { type };
  return object;
}

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(isStatusError(error), `expected a StatusError, got ${error}`);
    assert.equal(error.code, 400);
    return error.message;
  }
  assert.fail("expected a 400 BadRequest");
}

/** The interpretation compileSelector replaced: selectors parsed per call, field values gathered per object. */
function interpreted(definition: ResourceDefinition, labelSelector: string, fieldSelector: string, object: KubeObject) {
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector);
  if (!labels.matches(object.metadata.labels)) return false;
  const values: Record<string, string | undefined> = {
    "metadata.name": object.metadata.name,
    "metadata.namespace": object.metadata.namespace ?? "",
  };
  for (const { field } of fields.requirements) {
    if (!(field in values)) values[field] = definition.selectableFields?.[field]?.(object) ?? "";
  }
  return fields.requirements.every((r) => (r.operator === "=") === ((values[r.field] ?? "") === r.value));
}

describe("compileSelector()", () => {
  it("compileSelector() without selectors, or with empty ones, matches everything and pins no name", () => {
    for (const [labels, fields] of [
      [undefined, undefined],
      ["", ""],
      ["", ","],
    ]) {
      const selector = compileSelector(typed, labels, fields);
      assert.equal(selector.matchesAll, true);
      assert.equal(selector.name, undefined);
      assert.equal(selector.matches(thing("a")), true);
    }
  });

  it("compileSelector() reads metadata.name, metadata.namespace and the definition's selectable fields", () => {
    const selector = compileSelector(typed, "app=web", "metadata.namespace=ns,spec.type!=b,metadata.name==a");
    assert.equal(selector.matchesAll, false);
    assert.equal(selector.matches(thing("a", "ns", { app: "web" }, "c")), true);
    assert.equal(selector.matches(thing("a", "ns", { app: "web" })), true, "a missing field reads as empty");
    assert.equal(selector.matches(thing("a", "ns", { app: "web" }, "b")), false);
    assert.equal(selector.matches(thing("a", "other", { app: "web" }, "c")), false);
    assert.equal(selector.matches(thing("z", "ns", { app: "web" }, "c")), false);
    assert.equal(selector.matches(thing("a", "ns", { app: "db" }, "c")), false);
    assert.equal(compileSelector(typed, undefined, "metadata.namespace=").matches(thing("a")), true);
  });

  it("compileSelector() pins the name of metadata.name= or ==, not of !=", () => {
    assert.equal(compileSelector(typed, undefined, "metadata.name=a").name, "a");
    assert.equal(compileSelector(typed, "x=y", "spec.type=t,metadata.name==b").name, "b");
    assert.equal(compileSelector(typed, undefined, "metadata.name!=a").name, undefined);
    assert.equal(compileSelector(typed, "app=web", undefined).name, undefined);
  });

  it("compileSelector() refuses a field the definition does not offer, inherited names included", () => {
    assert.equal(
      badRequest(() => compileSelector(typed, undefined, "spec.nothing=1")),
      "field label not supported: spec.nothing",
    );
    assert.equal(
      badRequest(() => compileSelector(thingDefinition, undefined, "spec.type=1")),
      "field label not supported: spec.type",
    );
    assert.equal(
      badRequest(() => compileSelector(typed, undefined, "constructor=x")),
      "field label not supported: constructor",
    );
  });

  it("compileSelector() answers bad selectors with the parsers' 400 messages", () => {
    assert.equal(
      badRequest(() => compileSelector(typed, "a b", undefined)),
      "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    assert.equal(
      badRequest(() => compileSelector(typed, undefined, "abc")),
      "invalid selector: 'abc'; can't understand 'abc'",
    );
    // The label selector is read first, as before.
    assert.match(
      badRequest(() => compileSelector(typed, "a b", "spec.nothing=1")),
      /unable to parse requirement/,
    );
  });

  it("compileSelector() looks a selectable field up once, not per object", () => {
    let lookups = 0;
    const fields = new Proxy(
      { "spec.type": (object: KubeObject) => (object.spec as { type?: string } | undefined)?.type },
      {
        get(target, property, receiver) {
          lookups++;
          return Reflect.get(target, property, receiver);
        },
      },
    );
    const selector = compileSelector({ ...typed, selectableFields: fields }, undefined, "spec.type=a");
    const before = lookups;
    for (let i = 0; i < 10; i++) selector.matches(thing(`t${i}`, "ns", undefined, i % 2 ? "a" : "b"));
    assert.equal(lookups, before);
    assert.ok(before <= 1);
  });

  it("compileSelector() agrees with the per-object interpretation it replaced", () => {
    const key = fc.constantFrom("a", "b", "example.com/c");
    const value = fc.constantFrom("", "x", "y", "1", "20");
    const labelRequirement = fc.oneof(
      fc.tuple(key, fc.constantFrom("=", "==", "!="), value).map(([k, op, v]) => `${k}${op}${v}`),
      fc
        .tuple(key, fc.constantFrom("in", "notin"), fc.array(value, { minLength: 1, maxLength: 3 }))
        .map(([k, op, vs]) => `${k} ${op} (${vs.join(",")})`),
      fc.tuple(key, fc.constantFrom(">", "<"), fc.constantFrom("0", "5", "30")).map(([k, op, v]) => `${k}${op}${v}`),
      key,
      key.map((k) => `!${k}`),
    );
    const fieldTerm = fc
      .tuple(
        fc.constantFrom("metadata.name", "metadata.namespace", "spec.type"),
        fc.constantFrom("=", "==", "!="),
        fc.constantFrom("", "a", "b", "ns"),
      )
      .map(([f, op, v]) => `${f}${op}${v}`);
    const object = fc
      .tuple(
        fc.constantFrom("a", "b"),
        fc.option(fc.constantFrom("", "ns"), { nil: undefined }),
        fc.option(fc.dictionary(key, value), { nil: undefined }),
        fc.option(fc.constantFrom("", "a", "b"), { nil: undefined }),
      )
      .map(([name, namespace, labels, type]) => thing(name, namespace, labels, type));
    fc.assert(
      fc.property(
        fc.array(labelRequirement, { maxLength: 3 }).map((rs) => rs.join(",")),
        fc.array(fieldTerm, { maxLength: 3 }).map((ts) => ts.join(",")),
        fc.array(object, { minLength: 1, maxLength: 4 }),
        (labels, fields, objects) => {
          let selector: ReturnType<typeof compileSelector>;
          try {
            selector = compileSelector(typed, labels, fields);
          } catch (error) {
            // Only value rules can fail here ("a in (,)"), and the old way refused them too.
            assert.ok(isStatusError(error) && error.code === 400);
            assert.throws(() => interpreted(typed, labels, fields, objects[0]), { message: error.message });
            return;
          }
          for (const o of objects) assert.equal(selector.matches(o), interpreted(typed, labels, fields, o));
          if (selector.matchesAll) assert.ok(objects.every((o) => interpreted(typed, labels, fields, o)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
