// The REST operations of each resource, described once and rendered into both OpenAPI v3 and swagger 2.0. Paths,
// operation ids, descriptions and x-kubernetes-action values follow what the apiserver (and apiextensions' builder for
// custom resources) publishes, because kubectl explain and kubectl apply search these documents.

import type { ResourceDefinition } from "../registry/types.ts";
import { META_SCHEMA_NAMES } from "./openapi-meta.ts";
import { QUERY_PARAMETERS, type QueryParameter } from "./openapi-parameters.ts";
import { resourceVerbs } from "./resource-verbs.ts";

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface RouteResponse {
  code: number;
  description: string;
  /** Component schema name of the response body. */
  schema: string;
}

export interface Route {
  path: string;
  method: "get" | "post" | "put" | "patch" | "delete";
  /** x-kubernetes-action: get, list, post, put, patch, delete, deletecollection. */
  action: string;
  operationId: string;
  tag: string;
  description: string;
  gvk: GroupVersionKind;
  pathParameters: { name: string; description: string }[];
  query: QueryParameter[];
  body?: { schema: string; contentTypes: string[]; required: boolean };
  responses: RouteResponse[];
  produces: string[];
}

// No strategic merge patch: kubectl then falls back to merge patch for client-side apply.
export const PATCH_CONTENT_TYPES = [
  "application/apply-patch+yaml",
  "application/json-patch+json",
  "application/merge-patch+json",
];
const PRODUCES = ["application/json", "application/yaml"];
const LIST_PRODUCES = ["application/json", "application/json;stream=watch", "application/yaml"];
const NAMESPACE_DESCRIPTION = "object name and auth scope, such as for teams and projects";

/** Upstream model name: `io.k8s.api.core.v1.Service`, `io.k8s.api.rbac.v1.Role`, `sh.platform.management.v1.User`. */
export function modelName(group: string, version: string, kind: string): string {
  if (group === "") return `io.k8s.api.core.${version}.${kind}`;
  if (!group.includes(".")) return `io.k8s.api.${group}.${version}.${kind}`;
  if (group.endsWith(".k8s.io")) return `io.k8s.api.${group.split(".")[0]}.${version}.${kind}`;
  return `${group.split(".").reverse().join(".")}.${version}.${kind}`;
}

/** Every operation of one resource. */
export function resourceRoutes(d: ResourceDefinition): Route[] {
  const prefix = d.group === "" ? `/api/${d.version}` : `/apis/${d.group}/${d.version}`;
  const root = d.namespaced ? `${prefix}/namespaces/{namespace}/${d.plural}` : `${prefix}/${d.plural}`;
  const item = `${root}/{name}`;
  const verbs = new Set(resourceVerbs(d));
  const gv = operationIdGroupVersion(d.group, d.version);
  const scope = d.namespaced ? "Namespaced" : "";
  const kindSchema = modelName(d.group, d.version, d.kind);
  const routes: Route[] = [];

  const add = (
    path: string,
    method: Route["method"],
    action: string,
    operation: [verb: string, rest: string],
    description: string,
    kind: string,
    schema: string,
    body?: Route["body"],
  ) => {
    const pathParameters = [];
    if (path.includes("{name}")) pathParameters.push({ name: "name", description: `name of the ${kind}` });
    if (path.includes("{namespace}")) pathParameters.push({ name: "namespace", description: NAMESPACE_DESCRIPTION });
    routes.push({
      path,
      method,
      action,
      operationId: `${operation[0]}${gv.id}${operation[1]}`,
      tag: gv.tag,
      description,
      gvk: { group: d.group, version: d.version, kind },
      pathParameters,
      query: QUERY_PARAMETERS[action] ?? [],
      body,
      responses: responsesFor(action, schema),
      produces: action === "list" ? LIST_PRODUCES : PRODUCES,
    });
  };
  const objectBody = (schema: string): Route["body"] => ({ schema, contentTypes: ["*/*"], required: true });
  const patchBody: Route["body"] = {
    schema: META_SCHEMA_NAMES.patch,
    contentTypes: PATCH_CONTENT_TYPES,
    required: true,
  };
  const deleteBody: Route["body"] = { schema: META_SCHEMA_NAMES.deleteOptions, contentTypes: ["*/*"], required: false };
  const listSchema = `${kindSchema}List`;
  const listDescription = `${verbs.has("watch") ? "list or watch" : "list"} objects of kind ${d.kind}`;
  const an = article(d.kind);

  if (d.action) {
    const kind = d.action.kind;
    const schema = modelName(d.group, d.version, kind);
    if (verbs.has("create")) {
      add(
        root,
        "post",
        "post",
        ["create", `${scope}${kind}`],
        `create${article(kind)}${kind}`,
        kind,
        schema,
        objectBody(schema),
      );
    }
  } else {
    if (verbs.has("list")) {
      if (d.namespaced) {
        add(
          `${prefix}/${d.plural}`,
          "get",
          "list",
          ["list", `${d.kind}ForAllNamespaces`],
          listDescription,
          d.kind,
          listSchema,
        );
      }
      add(root, "get", "list", ["list", `${scope}${d.kind}`], listDescription, d.kind, listSchema);
    }
    if (verbs.has("create")) {
      add(
        root,
        "post",
        "post",
        ["create", `${scope}${d.kind}`],
        `create${an}${d.kind}`,
        d.kind,
        kindSchema,
        objectBody(kindSchema),
      );
    }
    if (verbs.has("deletecollection")) {
      const description = `delete collection of ${d.kind}`;
      add(
        root,
        "delete",
        "deletecollection",
        ["delete", `Collection${scope}${d.kind}`],
        description,
        d.kind,
        kindSchema,
        deleteBody,
      );
    }
    const the = ` the specified ${d.kind}`;
    if (verbs.has("get")) add(item, "get", "get", ["read", `${scope}${d.kind}`], `read${the}`, d.kind, kindSchema);
    if (verbs.has("update")) {
      add(
        item,
        "put",
        "put",
        ["replace", `${scope}${d.kind}`],
        `replace${the}`,
        d.kind,
        kindSchema,
        objectBody(kindSchema),
      );
    }
    if (verbs.has("delete"))
      add(
        item,
        "delete",
        "delete",
        ["delete", `${scope}${d.kind}`],
        `delete${an}${d.kind}`,
        d.kind,
        kindSchema,
        deleteBody,
      );
    if (verbs.has("patch")) {
      add(
        item,
        "patch",
        "patch",
        ["patch", `${scope}${d.kind}`],
        `partially update${the}`,
        d.kind,
        kindSchema,
        patchBody,
      );
    }
  }

  if (d.statusSubresource) {
    const path = `${item}/status`;
    const of = ` status of the specified ${d.kind}`;
    add(path, "get", "get", ["read", `${scope}${d.kind}Status`], `read${of}`, d.kind, kindSchema);
    add(
      path,
      "put",
      "put",
      ["replace", `${scope}${d.kind}Status`],
      `replace${of}`,
      d.kind,
      kindSchema,
      objectBody(kindSchema),
    );
    add(
      path,
      "patch",
      "patch",
      ["patch", `${scope}${d.kind}Status`],
      `partially update${of}`,
      d.kind,
      kindSchema,
      patchBody,
    );
  }
  for (const [name, handler] of Object.entries(d.subresources ?? {})) {
    const path = `${item}/${name}`;
    const schema = modelName(d.group, d.version, handler.kind);
    const rest = `${scope}${d.kind}${titleCase(name)}`;
    if (handler.verbs.includes("create")) {
      add(
        path,
        "post",
        "post",
        ["create", rest],
        `create ${name} of${an}${d.kind}`,
        handler.kind,
        schema,
        objectBody(schema),
      );
    }
    if (handler.verbs.includes("get")) {
      add(path, "get", "get", ["read", rest], `read ${name} of the specified ${d.kind}`, handler.kind, schema);
    }
  }
  return routes;
}

function responsesFor(action: string, schema: string): RouteResponse[] {
  const status = META_SCHEMA_NAMES.status;
  switch (action) {
    case "post":
      return [
        { code: 200, description: "OK", schema },
        { code: 201, description: "Created", schema },
        { code: 202, description: "Accepted", schema },
      ];
    case "put":
    case "patch":
      return [
        { code: 200, description: "OK", schema },
        { code: 201, description: "Created", schema },
      ];
    case "delete":
      return [
        { code: 200, description: "OK", schema: status },
        { code: 202, description: "Accepted", schema: status },
      ];
    case "deletecollection":
      return [{ code: 200, description: "OK", schema: status }];
    default:
      return [{ code: 200, description: "OK", schema }];
  }
}

// The apiserver's GetOperationIDAndTags: "management.platform.sh" + "v1" -> "ManagementPlatformShV1" and tag
// "managementPlatformSh_v1"; the core group is "core".
function operationIdGroupVersion(group: string, version: string): { id: string; tag: string } {
  const name = (group === "" ? "core" : group).replace(/\.k8s\.io$/, "");
  return {
    id: toOperationId(name, true) + toOperationId(version, true),
    tag: `${toOperationId(name, false)}_${toOperationId(version, false)}`,
  };
}

function toOperationId(s: string, capitalizeFirst: boolean): string {
  let out = "";
  let capitalize = capitalizeFirst;
  for (const [i, ch] of [...s].entries()) {
    if (/\p{L}|_/u.test(ch) || (i !== 0 && /\p{Nd}/u.test(ch))) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
  }
  return out;
}

// " a ", " an ", or " " for plurals, as the apiserver words create/delete descriptions.
function article(noun: string): string {
  if (noun.endsWith("s") && !noun.endsWith("ss")) return " ";
  return /^[aeiou]/i.test(noun) ? " an " : " a ";
}

function titleCase(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
}
