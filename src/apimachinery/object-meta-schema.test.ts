import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Ajv } from "ajv";
import { objectMetaSchema } from "./object-meta-schema.ts";
import type { JsonMap } from "./types.ts";

const properties = objectMetaSchema.properties as Record<string, JsonMap>;

describe("objectMetaSchema", () => {
  it("objectMetaSchema declares every field of the common metadata table", () => {
    assert.deepEqual(Object.keys(properties).sort(), [
      "annotations",
      "creationTimestamp",
      "deletionGracePeriodSeconds",
      "deletionTimestamp",
      "finalizers",
      "generateName",
      "generation",
      "labels",
      "managedFields",
      "name",
      "namespace",
      "ownerReferences",
      "resourceVersion",
      "selfLink",
      "uid",
    ]);
  });

  it("objectMetaSchema describes every field, nested ones included", () => {
    const missing: string[] = [];
    const visit = (schema: JsonMap, path: string) => {
      if (typeof schema.description !== "string" || schema.description === "") missing.push(path);
      for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, JsonMap>)) {
        visit(child, `${path}.${name}`);
      }
      const items = schema.items as JsonMap | undefined;
      if (items?.properties) {
        for (const [name, child] of Object.entries(items.properties as Record<string, JsonMap>)) {
          visit(child, `${path}[].${name}`);
        }
      }
    };
    visit(objectMetaSchema, "metadata");
    assert.deepEqual(missing, []);
  });

  it("objectMetaSchema types integers as int64 and timestamps as date-time", () => {
    for (const field of ["generation", "deletionGracePeriodSeconds"]) {
      assert.deepEqual([properties[field].type, properties[field].format], ["integer", "int64"]);
    }
    for (const field of ["creationTimestamp", "deletionTimestamp"]) {
      assert.deepEqual([properties[field].type, properties[field].format], ["string", "date-time"]);
    }
  });

  it("objectMetaSchema makes labels and annotations maps of strings", () => {
    for (const field of ["labels", "annotations"]) {
      assert.deepEqual(properties[field].additionalProperties, { type: "string" });
    }
  });

  it("objectMetaSchema keys ownerReferences by uid and makes finalizers a set", () => {
    const owners = properties.ownerReferences;
    assert.equal(owners["x-kubernetes-list-type"], "map");
    assert.deepEqual(owners["x-kubernetes-list-map-keys"], ["uid"]);
    assert.deepEqual((owners.items as JsonMap).required, ["apiVersion", "kind", "name", "uid"]);
    assert.equal(properties.finalizers["x-kubernetes-list-type"], "set");
  });

  it("objectMetaSchema gives managedFields entries their fields, fieldsV1 open", () => {
    const entry = properties.managedFields.items as JsonMap;
    const fields = entry.properties as Record<string, JsonMap>;
    assert.deepEqual(Object.keys(fields).sort(), [
      "apiVersion",
      "fieldsType",
      "fieldsV1",
      "manager",
      "operation",
      "subresource",
      "time",
    ]);
    assert.equal(fields.fieldsV1["x-kubernetes-preserve-unknown-fields"], true);
  });

  it("objectMetaSchema compiles with a plain ajv once x-kubernetes keywords are declared", () => {
    const ajv = new Ajv({ strict: false });
    const validate = ajv.compile(objectMetaSchema);
    assert.equal(validate({ name: "a", labels: { a: "b" }, creationTimestamp: null }), true);
    assert.equal(validate({ labels: { a: 1 } }), false);
  });
});
