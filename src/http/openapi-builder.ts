// Builds the OpenAPI documents from resource definitions: per group-version OpenAPI v3 (what kubectl apply, explain
// and client libraries fetch through /openapi/v3) and one swagger 2.0 document for older clients. The whole-object
// schema of a kind comes from an injected `objectSchemaOf`, the same function validation uses.

import { createHash } from "node:crypto";
import { isPlainObject, type JsonMap } from "../apimachinery/types.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import {
  API_VERSION_DESCRIPTION,
  KIND_DESCRIPTION,
  LIST_METADATA_DESCRIPTION,
  META_SCHEMA_NAMES,
  metaSchemas,
  OBJECT_METADATA_DESCRIPTION,
} from "./openapi-meta.ts";
import { PRETTY_PARAMETER, type QueryParameter } from "./openapi-parameters.ts";
import { type GroupVersionKind, modelName, type Route, resourceRoutes } from "./openapi-routes.ts";
import { resourceVerbs } from "./resource-verbs.ts";

export type ObjectSchemaOf = (topLevel: JsonMap) => JsonMap;

export interface GroupVersion {
  group: string;
  version: string;
}

export interface OpenApiBuilder {
  buildOpenApiV3Index(definitions: ResourceDefinition[], groupVersions?: (GroupVersion | string)[]): object;
  buildOpenApiV3Document(
    definitions: ResourceDefinition[],
    group: string,
    version: string,
  ): { document: object; hash: string };
  buildOpenApiV2(definitions: ResourceDefinition[]): object;
}

type Built = { document: object; hash: string };

const V3_PREFIX = "#/components/schemas/";
const V2_PREFIX = "#/definitions/";
const INFO = { title: "Kubernetes", version: "unversioned" };
const BEARER = { type: "apiKey", description: "Bearer Token authentication", name: "authorization", in: "header" };

export function createOpenApiBuilder(objectSchemaOf: ObjectSchemaOf): OpenApiBuilder {
  // Documents are built once per definitions array and group-version; the cache entry remembers which definition
  // objects the array held, so an array that gained or lost definitions is rebuilt.
  const cache = new WeakMap<
    ResourceDefinition[],
    { members: ResourceDefinition[]; byGroupVersion: Map<string, Built> }
  >();

  const buildOpenApiV3Document = (definitions: ResourceDefinition[], group: string, version: string): Built => {
    let entry = cache.get(definitions);
    if (!entry || entry.members.length !== definitions.length || entry.members.some((d, i) => d !== definitions[i])) {
      entry = { members: [...definitions], byGroupVersion: new Map() };
      cache.set(definitions, entry);
    }
    const key = `${group}/${version}`;
    const cached = entry.byGroupVersion.get(key);
    if (cached) return cached;
    const served = sortedByPlural(definitions.filter((d) => d.group === group && d.version === version));
    const document = {
      openapi: "3.0.0",
      info: INFO,
      paths: v3Paths(served.flatMap(resourceRoutes)),
      components: {
        schemas: sortKeys({ ...metaSchemas((n) => V3_PREFIX + n), ...kindSchemas(objectSchemaOf, served) }),
        securitySchemes: { BearerToken: BEARER },
      },
    };
    const result = {
      document,
      hash: createHash("sha512").update(JSON.stringify(document)).digest("hex").toUpperCase(),
    };
    entry.byGroupVersion.set(key, result);
    return result;
  };

  return {
    buildOpenApiV3Document,

    buildOpenApiV3Index(definitions, groupVersions) {
      const wanted = groupVersions?.map(parseGroupVersion) ?? definitions;
      const paths: Record<string, { serverRelativeURL: string }> = {};
      for (const { group, version } of wanted) {
        if (!definitions.some((d) => d.group === group && d.version === version)) continue;
        const path = group === "" ? `api/${version}` : `apis/${group}/${version}`;
        if (paths[path]) continue;
        const { hash } = buildOpenApiV3Document(definitions, group, version);
        paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
      }
      return { paths: sortKeys(paths) };
    },

    buildOpenApiV2(definitions) {
      const served = [...definitions].sort(
        (a, b) => compare(a.group, b.group) || compare(a.version, b.version) || compare(a.plural, b.plural),
      );
      const schemas = { ...metaSchemas((n) => V3_PREFIX + n), ...kindSchemas(objectSchemaOf, served) };
      return {
        swagger: "2.0",
        info: INFO,
        paths: v2Paths(served.flatMap(resourceRoutes)),
        definitions: sortKeys(toSwagger2(schemas) as Record<string, unknown>),
        securityDefinitions: { BearerToken: BEARER },
        security: [{ BearerToken: [] }],
      };
    },
  };
}

/** Component schemas of the served kinds: each resource's kind, its List kind, and its subresource kinds. */
function kindSchemas(objectSchemaOf: ObjectSchemaOf, definitions: ResourceDefinition[]): Record<string, JsonMap> {
  const schemas: Record<string, JsonMap> = {};
  const add = (gvk: GroupVersionKind, description: string, topLevel: JsonMap) => {
    const name = modelName(gvk.group, gvk.version, gvk.kind);
    schemas[name] ??= objectSchema(objectSchemaOf, gvk, description, topLevel);
  };
  for (const d of definitions) {
    add({ group: d.group, version: d.version, kind: d.kind }, d.description, d.schema);
    if (d.action && d.action.kind !== d.kind) {
      add({ group: d.group, version: d.version, kind: d.action.kind }, d.action.description, d.action.schema);
    }
    if (!d.action && resourceVerbs(d).includes("list")) {
      schemas[`${modelName(d.group, d.version, d.kind)}List`] = listSchema(d);
    }
  }
  for (const d of definitions) {
    for (const handler of Object.values(d.subresources ?? {})) {
      add({ group: d.group, version: d.version, kind: handler.kind }, handler.description, handler.schema);
    }
  }
  return schemas;
}

function objectSchema(objectSchemaOf: ObjectSchemaOf, gvk: GroupVersionKind, description: string, topLevel: JsonMap) {
  const whole = plainJson(objectSchemaOf(plainJson(topLevel)));
  const properties = isPlainObject(whole.properties) ? whole.properties : {};
  const { apiVersion, kind, metadata: _inlineMetadata, ...fields } = properties;
  return {
    ...whole,
    description,
    type: "object",
    properties: {
      apiVersion: described(apiVersion, API_VERSION_DESCRIPTION),
      kind: described(kind, KIND_DESCRIPTION),
      // The shared ObjectMeta component replaces the inline copy, so explain shows <ObjectMeta> and its docs.
      metadata: {
        description: OBJECT_METADATA_DESCRIPTION,
        default: {},
        allOf: [{ $ref: V3_PREFIX + META_SCHEMA_NAMES.objectMeta }],
      },
      ...fields,
    },
    "x-kubernetes-group-version-kind": [{ group: gvk.group, kind: gvk.kind, version: gvk.version }],
  };
}

function listSchema(d: ResourceDefinition): JsonMap {
  return {
    description: `${d.kind}List is a list of ${d.kind}`,
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: { type: "string", description: API_VERSION_DESCRIPTION },
      items: {
        type: "array",
        description: `List of ${d.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: { $ref: V3_PREFIX + modelName(d.group, d.version, d.kind) },
      },
      kind: { type: "string", description: KIND_DESCRIPTION },
      metadata: {
        description: LIST_METADATA_DESCRIPTION,
        default: {},
        allOf: [{ $ref: V3_PREFIX + META_SCHEMA_NAMES.listMeta }],
      },
    },
    "x-kubernetes-group-version-kind": [{ group: d.group, kind: `${d.kind}List`, version: d.version }],
  };
}

function described(schema: unknown, description: string): JsonMap {
  const base = isPlainObject(schema) ? schema : { type: "string" };
  return { ...base, description: typeof base.description === "string" ? base.description : description };
}

function v3Paths(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= { parameters: pathLevelParameters(route, false) };
    const path = paths[route.path];
    path[route.method] = {
      tags: [route.tag],
      description: route.description,
      operationId: route.operationId,
      ...(route.query.length > 0 ? { parameters: route.query.map((p) => v3Query(p)) } : {}),
      ...(route.body
        ? {
            requestBody: {
              content: mediaTypes(route.body.contentTypes, route.body.schema),
              required: route.body.required,
            },
          }
        : {}),
      responses: {
        ...Object.fromEntries(
          route.responses.map((r) => [
            String(r.code),
            { description: r.description, content: mediaTypes(route.produces, r.schema) },
          ]),
        ),
        "401": { description: "Unauthorized" },
      },
      "x-kubernetes-action": route.action,
      // An object here (an array in component schemas): kubectl's query-param verifier and explain read it so.
      "x-kubernetes-group-version-kind": { group: route.gvk.group, version: route.gvk.version, kind: route.gvk.kind },
    };
  }
  return sortKeys(paths);
}

function v2Paths(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= { parameters: pathLevelParameters(route, true) };
    const path = paths[route.path];
    const body = route.body
      ? [{ name: "body", in: "body", required: route.body.required, schema: { $ref: V2_PREFIX + route.body.schema } }]
      : [];
    path[route.method] = {
      description: route.description,
      consumes: route.body?.contentTypes ?? ["*/*"],
      produces: route.produces,
      schemes: ["https"],
      tags: [route.tag],
      operationId: route.operationId,
      ...(body.length + route.query.length > 0 ? { parameters: [...body, ...route.query.map(v2Query)] } : {}),
      responses: {
        ...Object.fromEntries(
          route.responses.map((r) => [
            String(r.code),
            { description: r.description, schema: { $ref: V2_PREFIX + r.schema } },
          ]),
        ),
        "401": { description: "Unauthorized" },
      },
      "x-kubernetes-action": route.action,
      "x-kubernetes-group-version-kind": { group: route.gvk.group, kind: route.gvk.kind, version: route.gvk.version },
    };
  }
  return sortKeys(paths);
}

// name, namespace and pretty apply to every operation of a path, so they sit on the path as kube-openapi puts them.
function pathLevelParameters(route: Route, v2: boolean): unknown[] {
  const params: { name: string }[] = route.pathParameters.map((p) =>
    v2
      ? { uniqueItems: true, type: "string", description: p.description, name: p.name, in: "path", required: true }
      : {
          name: p.name,
          in: "path",
          description: p.description,
          required: true,
          schema: { type: "string", uniqueItems: true },
        },
  );
  params.push(v2 ? v2Query(PRETTY_PARAMETER) : v3Query(PRETTY_PARAMETER));
  return params.sort((a, b) => compare(a.name, b.name));
}

function v3Query(p: QueryParameter) {
  return { name: p.name, in: "query", description: p.description, schema: { type: p.type, uniqueItems: true } };
}

function v2Query(p: QueryParameter) {
  return { uniqueItems: true, type: p.type, description: p.description, name: p.name, in: "query" };
}

function mediaTypes(types: string[], schema: string): Record<string, unknown> {
  return Object.fromEntries(types.map((t) => [t, { schema: { $ref: V3_PREFIX + schema } }]));
}

/**
 * Rewrites v3 schemas for swagger 2.0: references move to #/definitions, a described single-$ref allOf becomes a
 * $ref with a description (as the apiserver's v2 document spells it), and keywords v2 lacks are dropped.
 */
function toSwagger2(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toSwagger2);
  if (!isPlainObject(value)) return value;
  const out: JsonMap = {};
  const allOf = value.allOf;
  const collapse =
    Array.isArray(allOf) &&
    allOf.length === 1 &&
    isPlainObject(allOf[0]) &&
    typeof allOf[0].$ref === "string" &&
    !value.properties;
  for (const [key, child] of Object.entries(value)) {
    if (key === "oneOf" || key === "anyOf" || key === "not") continue;
    if (key === "nullable") {
      if (child === true) out["x-nullable"] = true;
      continue;
    }
    if (collapse && (key === "allOf" || key === "default")) continue;
    if (key === "$ref" && typeof child === "string") out.$ref = child.replace(V3_PREFIX, V2_PREFIX);
    else out[key] = toSwagger2(child);
  }
  if (collapse) return { $ref: String((allOf[0] as JsonMap).$ref).replace(V3_PREFIX, V2_PREFIX), ...out };
  return out;
}

function parseGroupVersion(gv: GroupVersion | string): GroupVersion {
  if (typeof gv !== "string") return gv;
  const slash = gv.lastIndexOf("/");
  return slash < 0 ? { group: "", version: gv } : { group: gv.slice(0, slash), version: gv.slice(slash + 1) };
}

// A JSON copy: drops undefined values and symbol keys (schema builders may attach some), and detaches from the input.
function plainJson(value: JsonMap): JsonMap {
  return JSON.parse(JSON.stringify(value)) as JsonMap;
}

function sortedByPlural(definitions: ResourceDefinition[]): ResourceDefinition[] {
  return [...definitions].sort((a, b) => compare(a.plural, b.plural));
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compare(a, b)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
