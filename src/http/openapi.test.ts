import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { userDefinition } from "../apis/management/v1/user.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { buildOpenApiV2, buildOpenApiV3Document, buildOpenApiV3Index } from "./openapi.ts";
import { configsDefinition, instancesDefinition, servicesDefinition } from "./testing-definitions.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests read into untyped JSON documents.
type Json = any;

const G = "management.platform.sh";
const definitions = [userDefinition as ResourceDefinition, configsDefinition, instancesDefinition, servicesDefinition];
const OBJECT_META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

function refs(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") into.push(v);
      else refs(v, into);
    }
  }
  return into;
}

describe("openapi", () => {
  it("buildOpenApiV3Document() uses the registry's object schema with metadata as a $ref", () => {
    const { document } = buildOpenApiV3Document(definitions, G, "v1") as { document: Json };
    const user = document.components.schemas["sh.platform.management.v1.User"];
    assert.deepEqual(user.properties.metadata.allOf, [{ $ref: OBJECT_META }]);
    assert.equal(user.properties.metadata.properties, undefined);
    assert.equal(user.properties.spec.properties.access.type, "array");
    assert.equal(typeof user.properties.spec.properties.access.items.description, "string");
    assert.deepEqual(user["x-kubernetes-group-version-kind"], [{ group: G, kind: "User", version: "v1" }]);
    for (const ref of refs(document)) {
      assert.ok(document.components.schemas[ref.replace("#/components/schemas/", "")], ref);
    }
  });

  it("buildOpenApiV3Document() marks the PATCH operation with fieldValidation", () => {
    const { document } = buildOpenApiV3Document(definitions, G, "v1") as { document: Json };
    const patch = document.paths[`/apis/${G}/v1/users/{name}`].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], { group: G, version: "v1", kind: "User" });
    assert.ok(patch.parameters.some((p: Json) => p.name === "fieldValidation" && p.in === "query"));
    assert.ok(!("application/strategic-merge-patch+json" in patch.requestBody.content));
  });

  it("buildOpenApiV3Index() points at the hashed per-group documents", () => {
    const index = buildOpenApiV3Index(definitions) as Json;
    const { hash } = buildOpenApiV3Document(definitions, G, "v1");
    assert.deepEqual(index.paths[`apis/${G}/v1`], { serverRelativeURL: `/openapi/v3/apis/${G}/v1?hash=${hash}` });
    assert.ok(index.paths["api/v1"]);
  });

  it("buildOpenApiV2() references swagger definitions only", () => {
    const swagger = buildOpenApiV2(definitions) as Json;
    assert.equal(swagger.swagger, "2.0");
    for (const ref of refs(swagger)) {
      assert.ok(ref.startsWith("#/definitions/"), ref);
      assert.ok(swagger.definitions[ref.slice("#/definitions/".length)], ref);
    }
  });
});
