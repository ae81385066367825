import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { userDefinition } from "../apis/management/v1/user.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { buildOpenApiV2 } from "./openapi.ts";
import { encodeOpenApiV2Protobuf } from "./openapi-v2-protobuf.ts";
import { WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT, WireReader } from "./protobuf/wire-reader.ts";
import { configsDefinition, instancesDefinition, servicesDefinition } from "./testing-definitions.ts";

// Field numbers below are read off gnostic-models openapiv2/OpenAPIv2.proto by hand, independently of the
// encoder's tables; the bytes are read with the schemaless wire reader.

type Value = bigint | Uint8Array | number;

/** Every field of a message in wire order: number and raw value (varint, bytes, or a double). */
function fieldsOf(bytes: Uint8Array): { field: number; value: Value }[] {
  const reader = new WireReader(bytes);
  const out: { field: number; value: Value }[] = [];
  while (!reader.done()) {
    const { field, wire } = reader.tag();
    if (wire === WIRE_VARINT) out.push({ field, value: reader.varint() });
    else if (wire === WIRE_BYTES) {
      const { start, end } = reader.range();
      out.push({ field, value: bytes.subarray(start, end) });
    } else if (wire === WIRE_FIXED64) {
      out.push({ field, value: new DataView(bytes.buffer, bytes.byteOffset + reader.pos, 8).getFloat64(0, true) });
      reader.pos += 8;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const all = (bytes: Uint8Array, field: number) =>
  fieldsOf(bytes)
    .filter((f) => f.field === field)
    .map((f) => f.value);
function one(bytes: Uint8Array, field: number): Uint8Array {
  const values = all(bytes, field);
  assert.equal(values.length, 1, `field ${field} once`);
  assert.ok(values[0] instanceof Uint8Array, `field ${field} is length-delimited`);
  return values[0];
}
const text = (bytes: Uint8Array, field: number) => Buffer.from(one(bytes, field)).toString("utf8");
const texts = (bytes: Uint8Array, field: number) =>
  all(bytes, field).map((v) => Buffer.from(v as Uint8Array).toString());
/** The value of the {1 name, 2 value} pair named `name` among the repeated field `field`. */
function named(bytes: Uint8Array, field: number, name: string): Uint8Array {
  const pair = all(bytes, field).find((v) => text(v as Uint8Array, 1) === name);
  assert.ok(pair, `pair ${name} in field ${field}`);
  return one(pair as Uint8Array, 2);
}
/** A vendor extension's value, from the YAML text of its Any. */
const extension = (bytes: Uint8Array, field: number, name: string): unknown =>
  parse(text(named(bytes, field, name), 2));

const DOCUMENT = {
  swagger: "2.0",
  info: { title: "Kubernetes", version: "unversioned" },
  paths: {
    "/apis/g/v1/things/{name}": {
      parameters: [
        { uniqueItems: true, type: "string", description: "name", name: "name", in: "path", required: true },
      ],
      patch: {
        consumes: ["application/merge-patch+json"],
        operationId: "patchThing",
        parameters: [
          { name: "body", in: "body", required: true, schema: { $ref: "#/definitions/Patch" } },
          { uniqueItems: true, type: "string", description: "fv", name: "fieldValidation", in: "query" },
          { $ref: "#/parameters/shared" },
        ],
        responses: {
          "200": { description: "OK", schema: { $ref: "#/definitions/g.v1.Thing" } },
          "401": { description: "Unauthorized" },
        },
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": { group: "g", kind: "Thing", version: "v1" },
      },
    },
  },
  definitions: {
    "g.v1.Thing": {
      description: "A thing.",
      type: "object",
      required: ["spec"],
      properties: {
        spec: {
          type: "object",
          properties: {
            labels: { type: "object", additionalProperties: { type: "string" } },
            closed: { type: "object", additionalProperties: false },
            names: { type: "array", items: { type: "string" } },
            size: { type: "integer", format: "int32", minimum: -1.5, maxLength: 7, enum: [1, 2] },
            empty: { type: "object", properties: {} },
            plain: { type: "object" },
          },
          "x-kubernetes-map-type": "atomic",
        },
      },
      "x-kubernetes-group-version-kind": [{ group: "g", kind: "Thing", version: "v1" }],
    },
  },
  securityDefinitions: {
    BearerToken: { type: "apiKey", description: "Bearer", name: "authorization", in: "header" },
  },
  security: [{ BearerToken: [] }],
};

describe("encodeOpenApiV2Protobuf()", () => {
  const bytes = encodeOpenApiV2Protobuf(DOCUMENT);

  it("encodeOpenApiV2Protobuf() writes the document's scalars, info and security", () => {
    assert.equal(text(bytes, 1), "2.0");
    assert.equal(text(one(bytes, 2), 1), "Kubernetes");
    assert.equal(text(one(bytes, 2), 2), "unversioned");
    const requirement = one(bytes, 12);
    const bearer = one(requirement, 1);
    assert.equal(text(bearer, 1), "BearerToken");
    assert.deepEqual(one(bearer, 2), new Uint8Array(), "an empty scope list is still present");
    const apiKey = one(named(one(bytes, 13), 1, "BearerToken"), 2);
    assert.deepEqual(
      [text(apiKey, 1), text(apiKey, 2), text(apiKey, 3), text(apiKey, 4)],
      ["apiKey", "authorization", "header", "Bearer"],
    );
  });

  it("encodeOpenApiV2Protobuf() writes schemas with TypeItem, ItemsItem, AdditionalPropertiesItem and extensions", () => {
    const thing = named(one(bytes, 9), 1, "g.v1.Thing");
    assert.equal(text(thing, 4), "A thing.");
    assert.deepEqual(texts(one(thing, 22), 1), ["object"]);
    assert.deepEqual(texts(thing, 19), ["spec"]);
    assert.deepEqual(extension(thing, 31, "x-kubernetes-group-version-kind"), [
      { group: "g", kind: "Thing", version: "v1" },
    ]);
    const spec = named(one(thing, 25), 1, "spec");
    assert.equal(extension(spec, 31, "x-kubernetes-map-type"), "atomic");
    const properties = one(spec, 25);
    const labels = named(properties, 1, "labels");
    assert.deepEqual(texts(one(one(one(labels, 21), 1), 22), 1), ["string"], "additionalProperties as a schema");
    assert.deepEqual(fieldsOf(one(named(properties, 1, "closed"), 21)), [{ field: 2, value: 0n }], "false is written");
    const items = one(named(properties, 1, "names"), 23);
    assert.equal(all(items, 1).length, 1);
    assert.deepEqual(texts(one(one(items, 1), 22), 1), ["string"]);
    const size = named(properties, 1, "size");
    assert.equal(text(size, 2), "int32");
    assert.deepEqual(all(size, 9), [-1.5], "minimum is a double");
    assert.deepEqual(all(size, 11), [7n], "maxLength is an int64");
    assert.deepEqual(
      all(size, 20).map((any) => parse(text(any as Uint8Array, 2))),
      [1, 2],
    );
    assert.deepEqual(one(named(properties, 1, "empty"), 25), new Uint8Array(), "empty properties stay present");
    assert.deepEqual(all(named(properties, 1, "plain"), 25), [], "no properties: no field");
  });

  it("encodeOpenApiV2Protobuf() writes paths with each parameter kind and responses", () => {
    const item = named(one(bytes, 8), 2, "/apis/g/v1/things/{name}");
    const pathParameter = one(one(one(one(item, 9), 1), 2), 4);
    assert.deepEqual([text(pathParameter, 4), text(pathParameter, 2), all(pathParameter, 1)], ["name", "path", [1n]]);
    const patch = one(item, 8);
    assert.equal(text(patch, 5), "patchThing");
    assert.deepEqual(texts(patch, 7), ["application/merge-patch+json"]);
    const [body, query, reference] = all(patch, 8) as Uint8Array[];
    assert.equal(text(one(one(one(body, 1), 1), 5), 1), "#/definitions/Patch");
    const querySchema = one(one(one(query, 1), 2), 3);
    assert.deepEqual(
      [text(querySchema, 4), text(querySchema, 2), text(querySchema, 6)],
      ["fieldValidation", "query", "string"],
    );
    assert.deepEqual(all(querySchema, 20), [1n], "uniqueItems");
    assert.equal(text(one(reference, 2), 1), "#/parameters/shared");
    const ok = one(named(one(patch, 9), 1, "200"), 1);
    assert.equal(text(ok, 1), "OK");
    assert.equal(text(one(one(ok, 2), 1), 1), "#/definitions/g.v1.Thing");
    assert.deepEqual(extension(patch, 13, "x-kubernetes-group-version-kind"), {
      group: "g",
      kind: "Thing",
      version: "v1",
    });
    assert.equal(extension(patch, 13, "x-kubernetes-action"), "patch");
  });

  it("encodeOpenApiV2Protobuf() reports keys the message has no field for", () => {
    const skipped: string[] = [];
    encodeOpenApiV2Protobuf(
      { swagger: "2.0", definitions: { a: { type: "object", oneOf: [], nullable: true } } },
      { skipped: (path) => skipped.push(path) },
    );
    assert.deepEqual(skipped, ['$.definitions["a"].oneOf', '$.definitions["a"].nullable']);
  });

  it("encodeOpenApiV2Protobuf() leaves nothing of a served document out", () => {
    const definitions = [
      userDefinition as ResourceDefinition,
      configsDefinition,
      instancesDefinition,
      servicesDefinition,
    ];
    const skipped: string[] = [];
    const document = buildOpenApiV2(definitions) as { definitions: Record<string, unknown> };
    const encoded = encodeOpenApiV2Protobuf(document, { skipped: (path) => skipped.push(path) });
    assert.deepEqual(skipped, []);
    const names = all(one(encoded, 9), 1).map((pair) => text(pair as Uint8Array, 1));
    assert.deepEqual(names, Object.keys(document.definitions));
  });
});
