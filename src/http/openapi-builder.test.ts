import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonMap } from "../apimachinery/types.ts";
import { createOpenApiBuilder } from "./openapi-builder.ts";
import { allDefinitions, configsDefinition, servicesDefinition, usersDefinition } from "./testing-definitions.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests read into untyped JSON documents.
type Json = any;

// Local stand-in for apimachinery/schema.ts objectSchemaOf: the whole object with an inline metadata schema.
const objectSchemaOf = (topLevel: JsonMap): JsonMap => ({
  type: "object",
  properties: {
    apiVersion: { type: "string", description: "api version" },
    kind: { type: "string", description: "kind" },
    metadata: { type: "object", properties: { name: { type: "string" } } },
    ...topLevel,
  },
});

const G = "management.platform.sh";
const P = `/apis/${G}/v1`;
const { buildOpenApiV3Document, buildOpenApiV3Index, buildOpenApiV2 } = createOpenApiBuilder(objectSchemaOf);
const doc = (): Json => buildOpenApiV3Document(allDefinitions, G, "v1").document;
const gvk = (kind: string, group = G) => ({ group, version: "v1", kind });

// What kubectl's query-param verifier does (cli-runtime supportsQueryParamV3): the first PATCH carrying the GVK decides.
function supportsFieldValidation(document: Json, kind: string): boolean | undefined {
  for (const path of Object.values<Json>(document.paths)) {
    const op = path.patch;
    if (!op) continue;
    const ext = op["x-kubernetes-group-version-kind"];
    if (ext?.group !== G || ext?.version !== "v1" || ext?.kind !== kind) continue;
    return op.parameters.some((p: Json) => p.name === "fieldValidation" && p.in === "query");
  }
  return undefined;
}

// What kubectl explain's template does: GVK from an operation on the resource paths, then the component whose
// x-kubernetes-group-version-kind array holds it, then the field path through properties, items, $ref and allOf.
function explain(document: Json, prefix: string, plural: string, fieldPath: string[]): Json {
  const candidates = [
    `${prefix}/${plural}`,
    `${prefix}/${plural}/{name}`,
    `${prefix}/namespaces/{namespace}/${plural}`,
    `${prefix}/namespaces/{namespace}/${plural}/{name}`,
  ];
  let found: Json;
  for (const p of candidates) {
    for (const m of ["get", "post", "put", "patch", "delete"]) {
      found ??= document.paths[p]?.[m]?.["x-kubernetes-group-version-kind"];
    }
  }
  assert.ok(found, `no operation for ${plural}`);
  const schema = Object.values<Json>(document.components.schemas).find((s) =>
    (s["x-kubernetes-group-version-kind"] ?? []).some((g: Json) => {
      try {
        assert.deepEqual(g, { group: found.group, kind: found.kind, version: found.version });
        return true;
      } catch {
        return false;
      }
    }),
  );
  assert.ok(schema, `no schema for ${JSON.stringify(found)}`);
  const resolve = (s: Json): Json => {
    if (s.$ref) return resolve(document.components.schemas[s.$ref.replace("#/components/schemas/", "")]);
    if (s.allOf?.length === 1 && !s.properties) return { ...resolve(s.allOf[0]), description: s.description };
    if (s.items && !s.properties) return resolve(s.items);
    return s;
  };
  let current = resolve(schema);
  for (const field of fieldPath) {
    const next = current.properties?.[field];
    assert.ok(next, `field ${field} not found`);
    current = resolve(next);
  }
  return current;
}

function collectRefs(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") into.push(v);
      else collectRefs(v, into);
    }
  }
  return into;
}

describe("openapi builder", () => {
  it("buildOpenApiV3Index() lists group-versions without a leading slash and with the document hash", () => {
    const index = buildOpenApiV3Index(allDefinitions) as Json;
    assert.deepEqual(Object.keys(index.paths), ["api/v1", `apis/${G}/v1`]);
    const { hash } = buildOpenApiV3Document(allDefinitions, G, "v1");
    assert.match(hash, /^[0-9A-F]{128}$/);
    assert.equal(index.paths[`apis/${G}/v1`].serverRelativeURL, `/openapi/v3/apis/${G}/v1?hash=${hash}`);
    assert.equal(
      index.paths["api/v1"].serverRelativeURL,
      `/openapi/v3/api/v1?hash=${buildOpenApiV3Document(allDefinitions, "", "v1").hash}`,
    );
  });

  it("buildOpenApiV3Index() restricts to the given group-versions and skips unserved ones", () => {
    const index = buildOpenApiV3Index(allDefinitions, [`${G}/v1`, { group: "x.example.com", version: "v1" }]) as Json;
    assert.deepEqual(Object.keys(index.paths), [`apis/${G}/v1`]);
    assert.deepEqual(Object.keys((buildOpenApiV3Index(allDefinitions, ["v1"]) as Json).paths), ["api/v1"]);
  });

  it("buildOpenApiV3Document() hashes stably and changes the hash with the content", () => {
    const a = buildOpenApiV3Document([...allDefinitions], G, "v1").hash;
    const b = buildOpenApiV3Document([...allDefinitions].reverse(), G, "v1").hash;
    assert.equal(a, b);
    const changed = allDefinitions.map((d) => (d === usersDefinition ? { ...d, description: "changed" } : d));
    assert.notEqual(buildOpenApiV3Document(changed, G, "v1").hash, a);
  });

  it("buildOpenApiV3Document() rebuilds when the same definitions array changes", () => {
    const definitions = [usersDefinition];
    const before = buildOpenApiV3Document(definitions, G, "v1");
    assert.equal(buildOpenApiV3Document(definitions, G, "v1"), before);
    definitions.push(configsDefinition);
    const after = buildOpenApiV3Document(definitions, G, "v1");
    assert.notEqual(after.hash, before.hash);
    assert.ok((after.document as Json).paths[`${P}/configs/{name}`]);
  });

  it("buildOpenApiV3Document() serves collection and item paths for a cluster-scoped resource", () => {
    const { paths } = doc();
    assert.deepEqual(Object.keys(paths[`${P}/users`]).sort(), ["delete", "get", "parameters", "post"]);
    assert.deepEqual(Object.keys(paths[`${P}/users/{name}`]).sort(), ["delete", "get", "parameters", "patch", "put"]);
    const list = paths[`${P}/users`].get;
    assert.equal(list["x-kubernetes-action"], "list");
    assert.deepEqual(list["x-kubernetes-group-version-kind"], gvk("User"));
    assert.equal(list.operationId, "listManagementPlatformShV1User");
    assert.deepEqual(list.tags, ["managementPlatformSh_v1"]);
    assert.equal(
      list.responses["200"].content["application/json"].schema.$ref,
      "#/components/schemas/sh.platform.management.v1.UserList",
    );
    assert.equal(paths[`${P}/users`].delete["x-kubernetes-action"], "deletecollection");
    assert.equal(paths[`${P}/users/{name}`].get.operationId, "readManagementPlatformShV1User");
    assert.equal(paths[`${P}/users/{name}`].put["x-kubernetes-action"], "put");
    assert.deepEqual(
      paths[`${P}/users/{name}`].parameters.map((p: Json) => [p.name, p.in]),
      [
        ["name", "path"],
        ["pretty", "query"],
      ],
    );
  });

  it("buildOpenApiV3Document() marks the PATCH operation with fieldValidation", () => {
    const patch = doc().paths[`${P}/users/{name}`].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], gvk("User"));
    assert.equal(patch["x-kubernetes-action"], "patch");
    assert.deepEqual(
      patch.parameters.find((p: Json) => p.name === "fieldValidation"),
      {
        name: "fieldValidation",
        in: "query",
        description: patch.parameters[2].description,
        schema: { type: "string", uniqueItems: true },
      },
    );
    assert.deepEqual(
      patch.parameters.map((p: Json) => p.name),
      ["dryRun", "fieldManager", "fieldValidation", "force"],
    );
    for (const kind of ["User", "VirtualClusterInstance", "Config"])
      assert.equal(supportsFieldValidation(doc(), kind), true, kind);
  });

  it("buildOpenApiV3Document() offers JSON, merge and apply patches but not strategic merge", () => {
    const { paths } = doc();
    for (const path of [`${P}/users/{name}`, `${P}/namespaces/{namespace}/virtualclusterinstances/{name}/status`]) {
      assert.deepEqual(Object.keys(paths[path].patch.requestBody.content).sort(), [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
      ]);
      assert.equal(
        paths[path].patch.requestBody.content["application/merge-patch+json"].schema.$ref,
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
      );
    }
  });

  it("buildOpenApiV3Document() gives PUT and POST dryRun, fieldManager and fieldValidation", () => {
    const { paths } = doc();
    for (const op of [paths[`${P}/users`].post, paths[`${P}/users/{name}`].put]) {
      assert.deepEqual(
        op.parameters.map((p: Json) => [p.name, p.in, p.schema.type]),
        [
          ["dryRun", "query", "string"],
          ["fieldManager", "query", "string"],
          ["fieldValidation", "query", "string"],
        ],
      );
      assert.equal(op.requestBody.content["*/*"].schema.$ref, "#/components/schemas/sh.platform.management.v1.User");
    }
  });

  it("buildOpenApiV3Document() gives list operations the list and watch query parameters", () => {
    const names = doc().paths[`${P}/users`].get.parameters.map((p: Json) => p.name);
    for (const name of [
      "labelSelector",
      "fieldSelector",
      "limit",
      "continue",
      "resourceVersion",
      "resourceVersionMatch",
      "watch",
      "allowWatchBookmarks",
      "sendInitialEvents",
      "timeoutSeconds",
    ]) {
      assert.ok(names.includes(name), name);
    }
  });

  it("buildOpenApiV3Document() serves namespaced, all-namespaces, status and subresource paths", () => {
    const { paths } = doc();
    const ns = `${P}/namespaces/{namespace}/virtualclusterinstances`;
    assert.equal(
      paths[`${P}/virtualclusterinstances`].get.operationId,
      "listManagementPlatformShV1VirtualClusterInstanceForAllNamespaces",
    );
    assert.equal(paths[ns].get.operationId, "listManagementPlatformShV1NamespacedVirtualClusterInstance");
    assert.deepEqual(
      paths[`${ns}/{name}`].parameters.map((p: Json) => p.name),
      ["name", "namespace", "pretty"],
    );
    assert.deepEqual(Object.keys(paths[`${ns}/{name}/status`]).sort(), ["get", "parameters", "patch", "put"]);
    assert.deepEqual(
      paths[`${ns}/{name}/status`].patch["x-kubernetes-group-version-kind"],
      gvk("VirtualClusterInstance"),
    );
    const kubeconfig = paths[`${ns}/{name}/kubeconfig`];
    assert.deepEqual(Object.keys(kubeconfig).sort(), ["parameters", "post"]);
    assert.deepEqual(kubeconfig.post["x-kubernetes-group-version-kind"], gvk("VirtualClusterInstanceKubeConfig"));
    assert.equal(kubeconfig.post["x-kubernetes-action"], "post");
    assert.equal(kubeconfig.post.operationId, "createManagementPlatformShV1NamespacedVirtualClusterInstanceKubeconfig");
    assert.equal(
      kubeconfig.post.requestBody.content["*/*"].schema.$ref,
      "#/components/schemas/sh.platform.management.v1.VirtualClusterInstanceKubeConfig",
    );
  });

  it("buildOpenApiV3Document() serves create-only resources with POST alone and honours restricted verbs", () => {
    const { paths, components } = doc();
    assert.deepEqual(Object.keys(paths[`${P}/selves`]).sort(), ["parameters", "post"]);
    assert.equal(paths[`${P}/selves/{name}`], undefined);
    assert.equal(components.schemas["sh.platform.management.v1.SelfList"], undefined);
    assert.deepEqual(Object.keys(paths[`${P}/configs`]).sort(), ["parameters", "post"]);
    assert.deepEqual(Object.keys(paths[`${P}/configs/{name}`]).sort(), ["get", "parameters", "patch", "put"]);
    assert.equal(components.schemas["sh.platform.management.v1.ConfigList"], undefined);
  });

  it("buildOpenApiV3Document() names kind schemas like upstream with a GVK array and a metadata $ref", () => {
    const { components } = doc();
    const user = components.schemas["sh.platform.management.v1.User"];
    assert.deepEqual(user["x-kubernetes-group-version-kind"], [{ group: G, kind: "User", version: "v1" }]);
    assert.equal(user.description, usersDefinition.description);
    assert.equal(user.type, "object");
    assert.deepEqual(user.properties.metadata.allOf, [
      { $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" },
    ]);
    assert.equal(user.properties.spec.properties.email.type, "string");
    assert.equal(user.properties.apiVersion.type, "string");
    const list = components.schemas["sh.platform.management.v1.UserList"];
    assert.deepEqual(list["x-kubernetes-group-version-kind"], [{ group: G, kind: "UserList", version: "v1" }]);
    assert.equal(list.properties.items.items.$ref, "#/components/schemas/sh.platform.management.v1.User");
    for (const name of ["ObjectMeta", "ListMeta", "Status", "DeleteOptions", "Patch", "Time", "OwnerReference"]) {
      assert.ok(components.schemas[`io.k8s.apimachinery.pkg.apis.meta.v1.${name}`], name);
    }
    assert.ok(components.schemas["sh.platform.management.v1.VirtualClusterInstanceKubeConfig"]);
  });

  it("buildOpenApiV3Document() leaves no dangling $ref", () => {
    const document = doc();
    for (const ref of collectRefs(document)) {
      assert.ok(document.components.schemas[ref.replace("#/components/schemas/", "")], ref);
    }
  });

  it("buildOpenApiV3Document() lets kubectl explain find users, users.spec.access and configs.status.auth", () => {
    const document = doc();
    assert.equal(explain(document, P, "users", []).description, usersDefinition.description);
    assert.equal(explain(document, P, "users", ["spec", "access"]).description, "An access rule.");
    assert.equal(explain(document, P, "configs", ["status", "auth"]).description, "Authentication settings.");
    const metadata = explain(document, P, "users", ["metadata"]);
    assert.match(metadata.description, /^Standard object's metadata/);
    assert.ok(metadata.properties.ownerReferences);
    assert.equal(explain(document, P, "selves", ["status"]).description, "Who you are.");
  });

  it("buildOpenApiV3Document() serves the core group under /api/v1 with core names", () => {
    const document = buildOpenApiV3Document(allDefinitions, "", "v1").document as Json;
    const list = document.paths["/api/v1/namespaces/{namespace}/services"].get;
    assert.equal(list.operationId, "listCoreV1NamespacedService");
    assert.deepEqual(list.tags, ["core_v1"]);
    assert.deepEqual(list["x-kubernetes-group-version-kind"], { group: "", version: "v1", kind: "Service" });
    assert.ok(document.paths["/api/v1/services"].get);
    assert.deepEqual(document.components.schemas["io.k8s.api.core.v1.Service"]["x-kubernetes-group-version-kind"], [
      { group: "", kind: "Service", version: "v1" },
    ]);
    assert.equal(explain(document, "/api/v1", "services", []).description, servicesDefinition.description);
    assert.equal(document.paths[`${P}/users`], undefined);
  });

  it("buildOpenApiV2() builds swagger 2.0 with definitions and GVK extensions", () => {
    const swagger = buildOpenApiV2(allDefinitions) as Json;
    assert.equal(swagger.swagger, "2.0");
    assert.ok(!JSON.stringify(swagger).includes("#/components/"));
    const user = swagger.definitions["sh.platform.management.v1.User"];
    assert.deepEqual(user["x-kubernetes-group-version-kind"], [{ group: G, kind: "User", version: "v1" }]);
    assert.equal(user.properties.metadata.$ref, "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    assert.match(user.properties.metadata.description, /^Standard object's metadata/);
    const patch = swagger.paths[`${P}/users/{name}`].patch;
    assert.deepEqual(patch["x-kubernetes-group-version-kind"], gvk("User"));
    assert.deepEqual(patch.consumes, [
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json",
    ]);
    assert.ok(
      patch.parameters.some((p: Json) => p.name === "fieldValidation" && p.in === "query" && p.type === "string"),
    );
    assert.deepEqual(patch.parameters[0], {
      name: "body",
      in: "body",
      required: true,
      schema: { $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" },
    });
    assert.ok(swagger.paths["/api/v1/namespaces/{namespace}/services/{name}"].get);
    for (const ref of collectRefs(swagger)) assert.ok(swagger.definitions[ref.replace("#/definitions/", "")], ref);
  });

  it("buildOpenApiV2() drops keywords swagger 2.0 lacks", () => {
    const defs = [
      {
        ...configsDefinition,
        schema: { spec: { type: "object", nullable: true, anyOf: [{ required: ["raw"] }], properties: {} } },
      },
    ];
    const swagger = buildOpenApiV2(defs) as Json;
    const spec = swagger.definitions["sh.platform.management.v1.Config"].properties.spec;
    assert.deepEqual(spec, { type: "object", "x-nullable": true, properties: {} });
  });
});
