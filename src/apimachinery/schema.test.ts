import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { type FieldError, formatFieldError } from "./field-errors.ts";
import { objectMetaSchema } from "./object-meta-schema.ts";
import { compileObjectSchema, objectSchemaOf } from "./schema.ts";
import type { JsonMap } from "./types.ts";

const topLevel: JsonMap = {
  spec: {
    type: "object",
    description: "Desired state.",
    required: ["name"],
    properties: {
      name: { type: "string", minLength: 1, maxLength: 8, pattern: "^[a-z]+$" },
      ttl: { type: "integer", minimum: 1, maximum: 100, default: 10 },
      ratio: { type: "number", exclusiveMinimum: 0 },
      enabled: { type: "boolean" },
      mode: { type: "string", enum: ["Fast", "Slow"] },
      optionalMode: { type: "string", enum: ["A"], nullable: true },
      note: { type: "string", nullable: true },
      when: { type: "string", format: "date-time" },
      size: { type: "integer", format: "int64" },
      port: { "x-kubernetes-int-or-string": true },
      tags: { type: "array", maxItems: 2, items: { type: "string" }, "x-kubernetes-list-type": "set" },
      access: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: {
          type: "object",
          required: ["name"],
          properties: {
            name: { type: "string" },
            verbs: { type: "array", items: { type: "string", enum: ["get", "list"] } },
          },
        },
      },
      env: { type: "object", additionalProperties: { type: "object", properties: { value: { type: "string" } } } },
      closed: { type: "object", additionalProperties: false, properties: { a: { type: "string" } } },
      open: { type: "object", additionalProperties: true, properties: { a: { type: "string" } } },
      free: {
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
        properties: { a: { type: "object", properties: {} } },
      },
      anything: { type: "object" },
    },
  },
  status: { type: "object", properties: { phase: { type: "string" } } },
};

const schema = compileObjectSchema(topLevel);

function object(spec: JsonMap, extra: JsonMap = {}): JsonMap {
  return { apiVersion: "x/v1", kind: "Thing", metadata: { name: "a" }, spec: { name: "ok", ...spec }, ...extra };
}

function errorsOf(spec: JsonMap, extra: JsonMap = {}): FieldError[] {
  return schema.validate(object(spec, extra));
}

function rendered(spec: JsonMap, extra: JsonMap = {}): string[] {
  return errorsOf(spec, extra).map(formatFieldError);
}

describe("compileObjectSchema().validate()", () => {
  it("validate() accepts a valid object", () => {
    const valid = object({
      ttl: 5,
      ratio: 0.5,
      enabled: true,
      mode: "Fast",
      optionalMode: null,
      note: null,
      when: "2024-02-29T10:00:00Z",
      size: 3,
      port: "http",
      tags: ["a", "b"],
      access: [{ name: "x", verbs: ["get"] }, { name: "y" }],
      env: { A: { value: "1" } },
      closed: { a: "x" },
      open: { b: 1 },
      free: { z: [1] },
      anything: { deep: { er: 1 } },
    });
    assert.deepEqual(schema.validate(valid), []);
  });

  it("validate() accepts the empty metadata and a null creationTimestamp", () => {
    assert.deepEqual(schema.validate(object({}, { metadata: { creationTimestamp: null } })), []);
  });

  const table: [string, JsonMap, string[], JsonMap?][] = [
    ["required", { name: undefined }, ["spec.name: Required value"]],
    [
      "type integer",
      { ttl: "5" },
      ['spec.ttl: Invalid value: "string": spec.ttl in body must be of type integer: "string"'],
    ],
    [
      "type integer with a fraction",
      { ttl: 1.5 },
      ['spec.ttl: Invalid value: "number": spec.ttl in body must be of type integer: "number"'],
    ],
    [
      "type boolean",
      { enabled: "yes" },
      ['spec.enabled: Invalid value: "string": spec.enabled in body must be of type boolean: "string"'],
    ],
    [
      "null where not nullable",
      { mode: null },
      ['spec.mode: Invalid value: "null": spec.mode in body must be of type string: "null"'],
    ],
    ["enum", { mode: "Medium" }, ['spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"']],
    ["minimum", { ttl: 0 }, ["spec.ttl: Invalid value: 0: spec.ttl in body should be greater than or equal to 1"]],
    ["maximum", { ttl: 101 }, ["spec.ttl: Invalid value: 101: spec.ttl in body should be less than or equal to 100"]],
    ["exclusiveMinimum", { ratio: 0 }, ["spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"]],
    [
      "minLength",
      { name: "" },
      [
        'spec.name: Invalid value: "": spec.name in body should be at least 1 chars long',
        "spec.name: Invalid value: \"\": spec.name in body should match '^[a-z]+$'",
      ],
    ],
    ["maxLength", { name: "abcdefghi" }, ["spec.name: Too long: may not be more than 8 bytes"]],
    ["pattern", { name: "ABC" }, ["spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"]],
    [
      "format date-time",
      { when: "yesterday" },
      ['spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'],
    ],
    [
      "an impossible date",
      { when: "2023-02-29T10:00:00Z" },
      [
        'spec.when: Invalid value: "2023-02-29T10:00:00Z": spec.when in body must be of type date-time: "2023-02-29T10:00:00Z"',
      ],
    ],
    ["maxItems", { tags: ["a", "b", "c"] }, ["spec.tags: Too many: 3: must have at most 2 items"]],
    ["list-type set duplicates", { tags: ["a", "a"] }, ['spec.tags[1]: Duplicate value: "a"']],
    [
      "list-type map duplicates",
      { access: [{ name: "x" }, { name: "x", verbs: [] }] },
      ['spec.access[1]: Duplicate value: {"name":"x"}'],
    ],
    [
      "int-or-string",
      { port: true },
      ['spec.port: Invalid value: "boolean": spec.port in body must be of type integer or string: "boolean"'],
    ],
    [
      "int-or-string with a fraction",
      { port: 1.5 },
      ['spec.port: Invalid value: "number": spec.port in body must be of type integer or string: "number"'],
    ],
    [
      "nested array paths",
      { access: [{ name: "x", verbs: ["get", "watch"] }] },
      ['spec.access[0].verbs[1]: Unsupported value: "watch": supported values: "get", "list"'],
    ],
    ["nested required", { access: [{ verbs: [] }] }, ["spec.access[0].name: Required value"]],
    [
      "map entry paths",
      { env: { "A/B": { value: 1 } } },
      ['spec.env[A/B].value: Invalid value: "integer": spec.env[A/B].value in body must be of type string: "integer"'],
    ],
    [
      "additionalProperties false",
      { closed: { b: 1 } },
      ["spec.closed.b: Invalid value: 1: spec.closed.b in body is a forbidden property"],
    ],
    ["nullable enum", { optionalMode: "B" }, ['spec.optionalMode: Unsupported value: "B": supported values: "A"']],
    [
      "metadata label values",
      {},
      [
        'metadata.labels[example.com/app]: Invalid value: "integer": metadata.labels[example.com/app] in body must be of type string: "integer"',
      ],
      { metadata: { labels: { "example.com/app": 1 } } },
    ],
    [
      "metadata generation",
      {},
      ['metadata.generation: Invalid value: "string": metadata.generation in body must be of type integer: "string"'],
      { metadata: { generation: "1" } },
    ],
    [
      "ownerReferences required keys",
      {},
      [
        "metadata.ownerReferences[0].apiVersion: Required value",
        "metadata.ownerReferences[0].kind: Required value",
        "metadata.ownerReferences[0].name: Required value",
      ],
      { metadata: { ownerReferences: [{ uid: "u" }] } },
    ],
    [
      "ownerReferences unique by uid",
      {},
      ['metadata.ownerReferences[1]: Duplicate value: {"uid":"u"}'],
      {
        metadata: {
          ownerReferences: [
            { apiVersion: "v1", kind: "K", name: "a", uid: "u" },
            { apiVersion: "v1", kind: "K", name: "b", uid: "u" },
          ],
        },
      },
    ],
    [
      "finalizers as a set",
      {},
      ['metadata.finalizers[1]: Duplicate value: "x"'],
      { metadata: { finalizers: ["x", "x"] } },
    ],
    [
      "apiVersion type",
      {},
      ['apiVersion: Invalid value: "integer": apiVersion in body must be of type string: "integer"'],
      { apiVersion: 1 },
    ],
  ];
  for (const [keyword, spec, expected, extra] of table) {
    it(`validate() reports ${keyword}`, () => {
      const cleaned = Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
      const target = object(cleaned, extra);
      if ("name" in spec && spec.name === undefined) delete (target.spec as JsonMap).name;
      assert.deepEqual(schema.validate(target).map(formatFieldError), expected);
    });
  }

  it("validate() reports every error at once", () => {
    assert.equal(rendered({ ttl: "x", mode: "y", tags: [1] }).length, 3);
  });

  it("validate() uses FieldValueTypeInvalid, NotSupported, TooLong and TooMany types", () => {
    const types = errorsOf({ ttl: "x", mode: "y", name: "abcdefghij", tags: ["a", "b", "c"], ratio: 0 }).map(
      (e) => e.type,
    );
    assert.deepEqual(types.sort(), [
      "FieldValueInvalid",
      "FieldValueNotSupported",
      "FieldValueTooLong",
      "FieldValueTooMany",
      "FieldValueTypeInvalid",
    ]);
  });

  it("validate() reports a non-object body at the root", () => {
    const [error] = schema.validate([]);
    assert.equal(error.type, "FieldValueTypeInvalid");
    assert.equal(error.field, "");
  });

  it("validate() refuses integers beyond their format, on both sides of each bound, naming the field", () => {
    const compiled = compileObjectSchema({
      spec: {
        type: "object",
        properties: {
          small: { type: "integer", format: "int32" },
          big: { type: "integer", format: "int64" },
          plain: { type: "integer" },
          port: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] },
          list: { type: "array", items: { type: "integer", format: "int32" } },
        },
      },
    });
    const check = (field: string, value: number) =>
      compiled.validate({ spec: { [field]: field === "list" ? [0, value] : value } }).map(formatFieldError);
    const safe = Number.MAX_SAFE_INTEGER;
    for (const [field, min, max] of [
      ["small", -(2 ** 31), 2 ** 31 - 1],
      ["port", -(2 ** 31), 2 ** 31 - 1],
      ["list", -(2 ** 31), 2 ** 31 - 1],
      ["big", -safe, safe],
      ["plain", -safe, safe],
    ] as const) {
      assert.deepEqual(check(field, max), [], `${field} at its maximum`);
      assert.deepEqual(check(field, min), [], `${field} at its minimum`);
      const format = max === safe ? "int64, the largest integers held exactly" : "int32";
      const path = field === "list" ? "spec.list[1]" : `spec.${field}`;
      assert.deepEqual(check(field, max + 1), [
        `${path}: Invalid value: ${max + 1}: ${path} in body should be less than or equal to ${max} (${format})`,
      ]);
      assert.deepEqual(check(field, min - 1), [
        `${path}: Invalid value: ${min - 1}: ${path} in body should be greater than or equal to ${min} (${format})`,
      ]);
      assert.equal(check(field, 1e300).length, 1, `${field}: 1e300`);
    }
    assert.ok(check("port", 1.5).some((e) => e.endsWith('must be of type integer or string: "number"')));
  });

  it("compileObjectSchema() compiles once per schema object", () => {
    assert.equal(compileObjectSchema(topLevel), schema);
  });

  it("compileObjectSchema() accepts every x-kubernetes extension and nullable without type", () => {
    const compiled = compileObjectSchema({
      spec: {
        type: "object",
        "x-kubernetes-map-type": "atomic",
        "x-kubernetes-validations": [{ rule: "self.a > 0" }],
        properties: {
          a: { nullable: true, description: "no type" },
          b: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true },
          c: { type: "string", example: "x", format: "some-unknown-format" },
        },
      },
    });
    assert.deepEqual(compiled.validate({ spec: { a: null, b: { kind: "X" }, c: "anything" } }), []);
  });
});

describe("compileObjectSchema().prune()", () => {
  it("prune() removes undeclared fields and reports their paths", () => {
    const target = object(
      { extra: 1, access: [{ name: "x", bogus: true }], env: { A: { value: "1", junk: 2 } }, closed: { a: "x", b: 1 } },
      { metadata: { name: "a", foo: "bar" }, unknownTop: {} },
    );
    assert.deepEqual(schema.prune(target).sort(), [
      "metadata.foo",
      "spec.access[0].bogus",
      "spec.closed.b",
      "spec.env.A.junk",
      "spec.extra",
      "unknownTop",
    ]);
    assert.deepEqual(target, object({ access: [{ name: "x" }], env: { A: { value: "1" } }, closed: { a: "x" } }));
  });

  it("prune() keeps everything below preserve-unknown-fields, additionalProperties and property-less objects", () => {
    const kept = { open: { a: "x", b: { c: 1 } }, free: { z: [1], a: {} }, anything: { x: { y: 1 } } };
    const target = object(kept, {
      metadata: { name: "a", managedFields: [{ manager: "m", fieldsV1: { "f:spec": {} } }] },
    });
    const before = structuredClone(target);
    assert.deepEqual(schema.prune(target), []);
    assert.deepEqual(target, before);
  });

  it("prune() still prunes declared properties below preserve-unknown-fields", () => {
    const target = object({ free: { z: 1, a: { inner: 1 } } });
    assert.deepEqual(schema.prune(target), ["spec.free.a.inner"]);
  });

  it("prune() drops nulls of non-nullable fields silently, and keeps nullable ones", () => {
    const target = object(
      { mode: null, note: null },
      { status: null, metadata: { name: "a", creationTimestamp: null } },
    );
    assert.deepEqual(schema.prune(target), []);
    assert.deepEqual(target, object({ note: null }, { metadata: { name: "a", creationTimestamp: null } }));
  });

  it("prune() treats __proto__ and constructor as ordinary unknown keys", () => {
    const target = JSON.parse('{"spec": {"name": "ok", "__proto__": {"x": 1}, "constructor": 1}}');
    assert.deepEqual(schema.prune(target).sort(), ["spec.__proto__", "spec.constructor"]);
    assert.deepEqual(Object.keys(target.spec), ["name"]);
    assert.equal(Object.getPrototypeOf(target.spec), Object.prototype);
  });

  it("prune() leaves values of the wrong type alone for validate() to report", () => {
    const target = object({ access: "not a list", env: [1] });
    assert.deepEqual(schema.prune(target), []);
    assert.equal(schema.validate(target).length, 2);
  });

  const anyJson = fc.json({ maxDepth: 3 }).map((text) => JSON.parse(text) as unknown);
  const key = fc.constantFrom(
    "name",
    "ttl",
    "mode",
    "access",
    "env",
    "closed",
    "open",
    "free",
    "x",
    "__proto__",
    "a",
    "value",
  );
  const { tree } = fc.letrec((tie) => ({
    tree: fc.oneof({ depthSize: "small" }, anyJson, fc.array(tie("tree"), { maxLength: 3 }), tie("node")),
    node: fc.dictionary(key, tie("tree"), { maxKeys: 4 }).map((d) => JSON.parse(JSON.stringify(d)) as JsonMap),
  }));
  const objects = fc
    .record({ metadata: tree, spec: tree, status: tree, other: tree }, { requiredKeys: ["spec"] })
    .map((o) => JSON.parse(JSON.stringify(o)) as JsonMap);

  it("prune() then validate() never reports a forbidden (unknown) field", () => {
    fc.assert(
      fc.property(objects, (target) => {
        schema.prune(target);
        const unknown = schema.validate(target).filter((e) => e.detail?.includes("forbidden property"));
        assert.deepEqual(unknown, []);
      }),
    );
  });

  it("prune() is idempotent", () => {
    fc.assert(
      fc.property(objects, (target) => {
        schema.prune(target);
        const once = JSON.stringify(target);
        assert.deepEqual(schema.prune(target), []);
        assert.equal(JSON.stringify(target), once);
      }),
    );
  });

  it("validate() never throws and never mutates", () => {
    fc.assert(
      fc.property(objects, (target) => {
        const before = JSON.stringify(target);
        schema.validate(target);
        assert.equal(JSON.stringify(target), before);
      }),
    );
  });
});

describe("objectSchemaOf()", () => {
  it("objectSchemaOf() adds apiVersion, kind and metadata to the top-level fields", () => {
    const whole = objectSchemaOf({ spec: { type: "object" } });
    const properties = whole.properties as JsonMap;
    assert.deepEqual(Object.keys(properties).sort(), ["apiVersion", "kind", "metadata", "spec"]);
    assert.deepEqual(properties.metadata, objectMetaSchema);
    assert.equal(whole.type, "object");
  });

  it("objectSchemaOf() returns a copy the caller may change", () => {
    const whole = objectSchemaOf({ spec: { type: "object" } });
    ((whole.properties as JsonMap).metadata as JsonMap).description = "changed";
    assert.notEqual(objectMetaSchema.description, "changed");
  });
});
